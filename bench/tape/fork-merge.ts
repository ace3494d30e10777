// CPU of a turn's tape writes: what the agent does with its session tape, without the model.
// Each turn takes a snapshot of the session tape, forks it, writes the bootstrap anchor when
// the tape has none (a new chat), appends one agent step (8 entries, two batches) and merges
// the fork into the store. CHATS chats × 5 turns, one turn at a time; process CPU (user +
// system, all threads) measured around the fork's appends ("write") and around the merge
// ("merge"), in µs per entry written, median of ROUNDS rounds on fresh stores. Two configured
// secrets (as a gateway has: the model key and the bot token), so redaction runs as in use.
// Run: node bench/tape/fork-merge.ts [chats=400] [stores=file,sqlite,memory]
import { realpathSync } from "node:fs";
import { rememberSecrets } from "../../src/config/redaction.ts";
import type { TapeStore } from "../../src/kernel/tape-contract.ts";
import { createFileTapeStore } from "../../src/tape/file-store.ts";
import { createMemoryTapeStore } from "../../src/tape/memory-store.ts";
import { createSqliteTapeStore } from "../../src/tape/sqlite-store.ts";
import { createTapes } from "../../src/tape/tapes.ts";
import { median, printTable, scratchDirectory, turnEntries } from "./shape.ts";

const CHATS = Number(process.argv[2] ?? 400);
const TURNS_PER_CHAT = 5;
const ROUNDS = 5;

rememberSecrets([
  { name: "api_key", value: "sk-bench-0123456789abcdefghijklmnop" },
  { name: "telegram.token", value: "123456789:AAbenchTOKENvalue_0123456789abcdefg" },
]);

const cpuMicros = (): number => {
  const used = process.cpuUsage();
  return used.user + used.system;
};

/** One round on a fresh store: µs of CPU per entry for the fork's writes and for the merge. */
async function round(store: TapeStore, workspace: string): Promise<{ write: number; merge: number }> {
  const tapes = createTapes({ store, archivePath: workspace });
  let write = 0;
  let merge = 0;
  let written = 0;
  for (let turn = 0; turn < CHATS * TURNS_PER_CHAT; turn++) {
    const chat = Math.floor(turn / TURNS_PER_CHAT);
    const read = tapes.snapshot(tapes.sessionTape(`bench:${chat}`, workspace));
    const fork = tapes.fork(read.tape);
    const batch = turnEntries(turn);
    const started = cpuMicros();
    await fork.tape.ensureBootstrapAnchor();
    await fork.tape.appendBatch(batch.slice(0, 4));
    await fork.tape.appendBatch(batch.slice(4));
    const wrote = cpuMicros();
    written += [...fork.pending().values()].reduce((sum, held) => sum + held.length, 0);
    const merging = cpuMicros();
    await fork.merge();
    const merged = cpuMicros();
    write += wrote - started;
    merge += merged - merging;
  }
  return { write: write / written, merge: merge / written };
}

const stores: [string, (directory: string) => TapeStore][] = [
  ["file", (directory) => createFileTapeStore({ directory })],
  ["sqlite", (directory) => createSqliteTapeStore({ path: `${directory}/tapes.sqlite3` })],
  ["memory", () => createMemoryTapeStore()],
];

const wanted = (process.argv[3] ?? "file,sqlite,memory").split(",");
const rows: string[][] = [];
for (const [name, make] of stores.filter(([name]) => wanted.includes(name))) {
  const writes: number[] = [];
  const merges: number[] = [];
  const totals: number[] = [];
  for (let run = 0; run <= ROUNDS; run++) {
    const scratch = scratchDirectory(`fork-${name}`);
    try {
      const store = make(scratch.path);
      const { write, merge } = await round(store, realpathSync(scratch.path));
      await store.close?.();
      if (run === 0) continue; // warm-up
      writes.push(write);
      merges.push(merge);
      totals.push(write + merge);
    } finally {
      scratch.remove();
    }
  }
  const format = (value: number) => value.toFixed(2);
  rows.push([name, format(median(writes)), format(median(merges)), format(median(totals))]);
}
printTable(["store", "write µs/entry", "merge µs/entry", "total µs/entry"], rows);
console.log(`\n${CHATS} chats × ${TURNS_PER_CHAT} turns, 10 entries a new chat's first turn (bootstrap), 8 after; median of ${ROUNDS} rounds after one warm-up`);
