// What one tape append costs PostgreSQL's backend, in CPU, against a bare round trip, and
// what two schema or commit changes would save: the server-side figures behind issue 35's
// "Where the database's CPU goes" in docs/benchmarks.md. One embedded PostgreSQL (fsync and
// synchronous commit on), one connection per variant, a fresh database each; C sessions x T
// turns of bub's six entries per turn (the first turn of a session also has a 5 KB system
// prompt), appended with the store's own statement (src/tape/postgres/store.ts). CPU is the
// backend process's utime + stime from /proc, per append.
//
// Variants: `bub` (the schema as shipped, migrations 1-2); `async commit` (the same append
// with synchronous_commit off for its own transaction: no WAL flush of its own); `no kind
// index` (the (tape, kind, id) index replaced by a partial one on anchors); `round trip`
// (a SELECT of the same parameters: the protocol, parse and commit of a read, no write).
//
// Run: node bench/cluster/append-cost.ts [sessions=1000] [turns=3] [rounds=2]
import { readFileSync } from "node:fs";
import pg from "pg";
import { startPostgres } from "../../test/support/postgres.ts";
import { intArg } from "../gateway/support/gateway.ts";
import { MIGRATIONS } from "../../src/tape/postgres/schema.ts";
import { APPEND_SQL as APPEND } from "../../src/tape/postgres/append.ts";

const SESSIONS = intArg(2, 1000, 100_000);
const TURNS = intArg(3, 3, 100);
const ROUNDS = intArg(4, 2, 10);

const SCHEMA = MIGRATIONS.map((migration) => migration.sql).join(";\n");
/** The append committing without waiting for its WAL flush (synchronous_commit off for its own transaction). */
const RELAXED = APPEND.replace("WITH reserved AS (", "WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true)), reserved AS (").replace("FROM reserved CROSS JOIN", "FROM reserved CROSS JOIN relaxed CROSS JOIN");
if (!RELAXED.includes("relaxed CROSS JOIN")) throw new Error("src/tape/postgres/append.ts's APPEND_SQL changed shape: update the async commit variant");
const VARIANTS: { name: string; schema: string; sql: string }[] = [
  { name: "bub", schema: SCHEMA, sql: APPEND },
  { name: "async commit", schema: SCHEMA, sql: RELAXED },
  { name: "no kind index", schema: `${SCHEMA}; DROP INDEX bub_tape_entries_kind; CREATE INDEX bub_tape_entries_anchors ON bub_tape_entries (tape, id) WHERE kind = 'anchor'`, sql: APPEND },
  { name: "round trip", schema: SCHEMA, sql: "SELECT $1::text, $2::int, $3::text[], $4::text[], $5::text[], $6::text[], $7::text[]" },
];

const FRAMED = 'sender_id=12345|channel=$telegram|chat_id=12345\n---Date: 2026-12-01T22:39:43+00:00\n{"message":"hello there, how are you today","message_id":17}';
const SYSTEM = "Finish the task by calling tools or skills. When a tool can tell you something, call it; do not guess. ".repeat(48);

/** A turn's entries as bub appends them: loop.start, loop.step.start, (system), user, assistant, run, loop.step. */
function turnEntries(turn: number): { kind: string; payload: unknown; meta: unknown }[] {
  const meta = { turn_id: `turn-${turn}` };
  const event = (name: string, data: unknown) => ({ kind: "event", payload: { name, data }, meta });
  return [
    event("loop.start", { model: "openai:fake-model", user: "telegram:12345", prompt: FRAMED }),
    event("loop.step.start", { step: 1, prompt: FRAMED }),
    ...(turn === 0 ? [{ kind: "system", payload: { content: SYSTEM }, meta }] : []),
    { kind: "message", payload: { role: "user", content: FRAMED }, meta },
    { kind: "message", payload: { role: "assistant", content: "Sure, here is the answer to your question." }, meta },
    event("run", { status: "ok", usage: { prompt_tokens: 1236, completion_tokens: 12, total_tokens: 1248 }, cost: { usd: 0.0001, source: "catalog" } }),
    event("loop.step", { step: 1, elapsed_ms: 222, status: "ok" }),
  ];
}

/** utime + stime of a process, in ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

const server = await startPostgres({ durable: true });
try {
  console.log(`${SESSIONS} sessions x ${TURNS} turns per variant; backend CPU and wall time per append`);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [index, variant] of VARIANTS.entries()) {
      const client = new pg.Client({ connectionString: await server.createDatabase(`append_cost_${round}_${index}`) });
      await client.connect();
      try {
        await client.query(variant.schema);
        const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
        const pid = rows[0]!.pid;
        const before = cpuMs(pid);
        const started = performance.now();
        for (let turn = 0; turn < TURNS; turn++) {
          for (let session = 0; session < SESSIONS; session++) {
            const entries = turnEntries(turn);
            const date = new Date().toISOString();
            await client.query({
              name: "append",
              text: variant.sql,
              values: [`session-${session}`, entries.length, entries.map((e) => e.kind), entries.map(() => null), entries.map((e) => JSON.stringify(e.payload)), entries.map((e) => JSON.stringify(e.meta)), entries.map(() => date)],
            });
          }
        }
        const appends = SESSIONS * TURNS;
        console.log(`round ${round}  ${variant.name.padEnd(14)} ${(((cpuMs(pid) - before) / appends) * 1000).toFixed(0).padStart(4)} µs CPU  ${(((performance.now() - started) / appends) * 1000).toFixed(0).padStart(4)} µs wall`);
      } finally {
        await client.end();
      }
    }
  }
} finally {
  await server.stop();
}
