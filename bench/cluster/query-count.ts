// Bench-only preload: counts the queries the process it is loaded into sends to PostgreSQL,
// i.e. the calls of `pg`'s `Client.prototype.query` (the tape store's pool, the poller's
// advisory-lock connection and any pg-boss pool all go through it; a pool's `query` calls its
// client's once). bench/cluster loads it into each installed gateway with
//
//   NODE_OPTIONS="--import /abs/path/bench/cluster/query-count.ts" BENCH_QUERY_COUNT_FILE=/tmp/x.json
//
// `pg` is resolved from the installed bin (`process.argv[1]`), so the patched module is the
// one the gateway loads (ES module `import("pg")` and `require("pg")` share pg's CommonJS
// module). SIGUSR2 resets the count (the bench sends it when the burst starts); at exit the
// count since then is written as JSON, with the 25 most frequent statements (their first 100
// characters) and how often each ran. Does nothing without BENCH_QUERY_COUNT_FILE.
import { writeFileSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { isMainThread } from "node:worker_threads";

const file = process.env.BENCH_QUERY_COUNT_FILE;

if (file && isMainThread && process.argv[1]) {
  const require = createRequire(realpathSync(process.argv[1]));
  const pg = require("pg") as { Client: { prototype: { query: (...args: unknown[]) => unknown } } };
  const original = pg.Client.prototype.query;
  let queries = 0;
  let since = Date.now();
  /** Calls per statement, keyed by its first 100 characters with white space squeezed. */
  let statements = new Map<string, number>();
  pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
    queries++;
    const first = args[0];
    const text = typeof first === "string" ? first : typeof first === "object" && first !== null && "text" in first ? String(first.text) : "?";
    const key = text.replace(/\s+/g, " ").trim().slice(0, 100);
    statements.set(key, (statements.get(key) ?? 0) + 1);
    return original.apply(this, args);
  };
  const write = () => {
    const top = [...statements].sort((a, b) => b[1] - a[1]).slice(0, 25);
    writeFileSync(file, `${JSON.stringify({ queries, sinceMs: Date.now() - since, statements: Object.fromEntries(top) })}\n`);
  };
  process.on("SIGUSR2", () => {
    queries = 0;
    statements = new Map();
    since = Date.now();
  });
  process.once("exit", write);
}
