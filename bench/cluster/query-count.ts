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
// count since then is written as JSON. Does nothing without BENCH_QUERY_COUNT_FILE.
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
  pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
    queries++;
    return original.apply(this, args);
  };
  const write = () => writeFileSync(file, `${JSON.stringify({ queries, sinceMs: Date.now() - since })}\n`);
  process.on("SIGUSR2", () => {
    queries = 0;
    since = Date.now();
  });
  process.once("exit", write);
}
