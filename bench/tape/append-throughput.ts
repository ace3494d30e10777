// Append throughput with batches of 8 entries (one agent step = one appendBatch), each batch
// durable (file store: one write + one fdatasync; SQLite: one WAL commit with synchronous=FULL;
// PostgreSQL: one committed INSERT over a pool, on loopback, see ./postgres.ts).
//   sequential: one writer, each batch awaited before the next (one session);
//   concurrent: 8 sessions appending at once, to 8 tapes (a busy gateway).
// Run: node bench/tape/append-throughput.ts [batches]
import type { TapeStore } from "../../src/kernel/tape-contract.ts";
import { createFileTapeStore } from "../../src/tape/file-store.ts";
import { createMemoryTapeStore } from "../../src/tape/memory-store.ts";
import { createSqliteTapeStore } from "../../src/tape/sqlite-store.ts";
import { benchPostgres } from "./postgres.ts";
import { median, printTable, scratchDirectory, timed, turnEntries } from "./shape.ts";

const BATCHES = Number(process.argv[2] ?? 2_000);
const ROUNDS = 3;
const SESSIONS = 8;

async function sequential(store: TapeStore, tape: string): Promise<number> {
  const elapsed = await timed(async () => {
    for (let turn = 0; turn < BATCHES; turn++) await store.appendBatch!(tape, turnEntries(turn));
  });
  return (BATCHES * 8) / (elapsed / 1000);
}

async function concurrent(store: TapeStore, tape: string): Promise<number> {
  const perSession = Math.ceil(BATCHES / SESSIONS);
  const elapsed = await timed(() =>
    Promise.all(
      Array.from({ length: SESSIONS }, async (_, session) => {
        for (let turn = 0; turn < perSession; turn++) await store.appendBatch!(`${tape}${session}`, turnEntries(turn));
      }),
    ),
  );
  return (perSession * SESSIONS * 8) / (elapsed / 1000);
}

const postgres = await benchPostgres();
const stores: [string, string, (directory: string) => TapeStore | Promise<TapeStore>][] = [
  ["file", "write + fdatasync per batch (group commit when concurrent)", (directory) => createFileTapeStore({ directory })],
  ["sqlite", "WAL, synchronous=FULL, one transaction per batch", (directory) => createSqliteTapeStore({ path: `${directory}/tapes.sqlite3` })],
  ["postgres", `one statement per batch, synchronous_commit on (${postgres.where})`, (directory) => postgres.make(directory)],
  ["memory", "none (reference point)", () => createMemoryTapeStore()],
];

const rows: string[][] = [];
for (const [name, durability, make] of stores) {
  const scratch = scratchDirectory(`append-${name}`);
  try {
    const store = await make(scratch.path);
    await store.appendBatch!("warmup__tape", turnEntries(0));
    const seq: number[] = [];
    const conc: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      seq.push(await sequential(store, `seq${round}__tape`));
      conc.push(await concurrent(store, `conc${round}__tape`));
    }
    await store.close?.();
    const format = (value: number) => Math.round(value).toLocaleString("en-US");
    rows.push([name, format(median(seq)), format(median(conc)), durability]);
  } finally {
    scratch.remove();
  }
}
await postgres.stop();
printTable(["store", "sequential entries/s", `${SESSIONS} sessions entries/s`, "durability"], rows);
console.log(`\n${BATCHES} batches of 8 entries per run, median of ${ROUNDS} runs; target >= 20,000 entries/s (file store)`);
