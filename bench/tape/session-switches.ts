// What the builtin loadState pays per turn to know a session's model switches, against the
// length of the session's tape: a file tape of N turns (8 entries a turn, one `model_switch`
// event near the start), then one more turn appended before each read, as a gateway does.
//   full: every event of the tape read and decoded (what each turn did before);
//   incremental: `sessionSwitches` with its memo (the first read is full, later ones read
//   only the events after the last one seen, with `afterId`).
// Median time per turn's read, warm store object, file and SQLite stores.
// Run: node bench/tape/session-switches.ts [turns=1000,10000]
import { sessionSwitches, type SwitchMemo } from "../../src/builtin/agent-plugin.ts";
import type { TapeStore } from "../../src/kernel/tape-contract.ts";
import { entries } from "../../src/tape/entry.ts";
import { createFileTapeStore } from "../../src/tape/file-store.ts";
import { createSqliteTapeStore } from "../../src/tape/sqlite-store.ts";
import { createTape, type Tape } from "../../src/tape/tape.ts";
import { median, printTable, scratchDirectory, timed, turnEntries } from "./shape.ts";

const NAME = "0123456789abcdef__fedcba9876543210";
const READS = 101;
const lengths = (process.argv[2] ?? "1000,10000").split(",").map(Number);

async function filled(store: TapeStore, turns: number): Promise<Tape> {
  const tape = createTape({ name: NAME, store, archivePath: scratchDirectory("archive").path });
  await tape.handoff("session/start", { owner: "human" });
  await tape.appendEvent("model_switch", { model: "openai:gpt-5" });
  for (let turn = 0; turn < turns; turn += 500) {
    const batch = [];
    for (let each = turn; each < Math.min(turns, turn + 500); each++) batch.push(...turnEntries(each));
    await tape.appendBatch(batch);
  }
  return tape;
}

async function perTurn(tape: Tape, read: () => Promise<unknown>, turns: number): Promise<number> {
  const times: number[] = [];
  await read();
  for (let run = 0; run < READS; run++) {
    await tape.appendBatch(turnEntries(turns + run));
    times.push(await timed(read));
  }
  return median(times);
}

const rows: string[][] = [];
for (const [label, make] of [
  ["file", (dir: string) => createFileTapeStore({ directory: dir })],
  ["sqlite", (dir: string) => createSqliteTapeStore({ path: `${dir}/tapes.sqlite3` })],
] as const) {
  for (const turns of lengths) {
    const scratch = scratchDirectory("switches");
    const store = make(scratch.path);
    const tape = await filled(store, turns);
    const full = await perTurn(tape, () => tape.search(tape.query().kinds("event")), turns);
    const memos = new Map<string, SwitchMemo>();
    const incremental = await perTurn(tape, () => sessionSwitches(tape, memos), turns + READS);
    rows.push([label, String(turns), `${full.toFixed(3)} ms`, `${incremental.toFixed(3)} ms`, `${(full / incremental).toFixed(1)}×`]);
    await store.close?.();
    scratch.remove();
  }
}
printTable(["store", "turns on the tape", "full read of the events", "incremental", "full / incremental"], rows);
