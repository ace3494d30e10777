// Context rebuild cost versus tape length: a 100,000-entry tape and a 1,000-entry tape of the
// same shape, the last anchor 50 entries back. One rebuild = ensureBootstrapAnchor() +
// readMessages(), as at the start of every model step.
//   cold: a fresh store object per rebuild (new process / first turn after start);
//   warm: the same store object rebuilt repeatedly (a long-running gateway).
// Then, on the same two tapes, appends: 8-entry batches (one agent step) by one writer, each
// awaited, in entries/s, to show whether a long tape makes appending slower (the two tapes
// take turns, 5 rounds, median).
// Run: node bench/tape/context-rebuild.ts
import type { NewTapeEntry, TapeStore } from "../../src/kernel/tape-contract.ts";
import { entries } from "../../src/tape/entry.ts";
import { createFileTapeStore } from "../../src/tape/file-store.ts";
import { createSqliteTapeStore } from "../../src/tape/sqlite-store.ts";
import { createTape } from "../../src/tape/tape.ts";
import { benchPostgres } from "./postgres.ts";
import { median, printTable, scratchDirectory, timed, turnEntries } from "./shape.ts";

const TAPE = "0123456789abcdef__fedcba9876543210";
const COLD_RUNS = 31;
const WARM_RUNS = 101;
const APPEND_BATCHES = 500;
const APPEND_ROUNDS = 5;

function tapeOfLength(length: number): NewTapeEntry[] {
  const out: NewTapeEntry[] = [entries.anchor("session/start", { owner: "human" }), entries.event("handoff", { name: "session/start", state: { owner: "human" } })];
  for (let turn = 0; out.length < length - 51; turn++) {
    if (turn % 60 === 59) out.push(entries.anchor(`handoff/${turn}`, { summary: "earlier work" }));
    out.push(...turnEntries(turn));
  }
  out.length = length - 51;
  out.push(entries.anchor("handoff/last", { summary: "the story so far" }));
  for (let turn = 0; out.length < length; turn++) out.push(...turnEntries(100_000 + turn));
  out.length = length;
  return out;
}

async function fill(store: TapeStore, length: number): Promise<void> {
  const all = tapeOfLength(length);
  for (let start = 0; start < all.length; start += 1000) await store.appendBatch!(TAPE, all.slice(start, start + 1000));
}

async function rebuild(store: TapeStore): Promise<number> {
  const tape = createTape({ name: TAPE, store, archivePath: "/nonexistent" });
  await tape.ensureBootstrapAnchor();
  return (await tape.readMessages()).length;
}

interface Result {
  cold: number;
  warm: number;
  messages: number;
}

async function measure(open: () => TapeStore | Promise<TapeStore>): Promise<Result> {
  const cold: number[] = [];
  let messages = 0;
  for (let run = 0; run < COLD_RUNS; run++) {
    const store = await open();
    cold.push(await timed(async () => (messages = await rebuild(store))));
    await store.close?.();
  }
  const store = await open();
  await rebuild(store);
  const warm: number[] = [];
  for (let run = 0; run < WARM_RUNS; run++) warm.push(await timed(() => rebuild(store)));
  await store.close?.();
  return { cold: median(cold), warm: median(warm), messages };
}

/** Entries per second appended to the tape in 8-entry batches, one after the other. */
async function appendRate(store: TapeStore): Promise<number> {
  const elapsed = await timed(async () => {
    for (let turn = 0; turn < APPEND_BATCHES; turn++) await store.appendBatch!(TAPE, turnEntries(200_000 + turn));
  });
  return (APPEND_BATCHES * 8) / (elapsed / 1000);
}

const postgres = await benchPostgres();
const stores: [string, (directory: string) => TapeStore | Promise<TapeStore>][] = [
  ["file", (directory) => createFileTapeStore({ directory })],
  ["sqlite", (directory) => createSqliteTapeStore({ path: `${directory}/tapes.sqlite3` })],
  // cold: a new pool per rebuild, so the connection is part of it
  ["postgres", (directory) => postgres.make(directory)],
];

const rows: string[][] = [];
const appendRows: string[][] = [];
for (const [name, make] of stores) {
  // Warm-up (JIT) on a throw-away tape so the first measured size is not penalised.
  const warmup = scratchDirectory(`rebuild-warmup-${name}`);
  try {
    const writer = await make(warmup.path);
    await fill(writer, 1_000);
    await writer.close?.();
    await measure(() => make(warmup.path));
  } finally {
    warmup.remove();
  }
  const results = new Map<number, Result>();
  const appends = new Map<number, number[]>();
  const scratches = new Map<number, ReturnType<typeof scratchDirectory>>();
  try {
    for (const length of [1_000, 100_000]) {
      const scratch = scratchDirectory(`rebuild-${name}`);
      scratches.set(length, scratch);
      const writer = await make(scratch.path);
      await fill(writer, length);
      await writer.close?.();
      results.set(length, await measure(() => make(scratch.path)));
    }
    // Appends to the two tapes take turns, so a slow moment of the disk hits both alike.
    for (let round = 0; round < APPEND_ROUNDS; round++)
      for (const [length, scratch] of scratches) {
        const appender = await make(scratch.path);
        appends.set(length, [...(appends.get(length) ?? []), await appendRate(appender)]);
        await appender.close?.();
      }
  } finally {
    for (const scratch of scratches.values()) scratch.remove();
  }
  const rate = (length: number) => median(appends.get(length)!);
  appendRows.push([name, Math.round(rate(1_000)).toLocaleString("en-US"), Math.round(rate(100_000)).toLocaleString("en-US"), `${(rate(100_000) / rate(1_000)).toFixed(2)}x`]);
  const small = results.get(1_000)!;
  const large = results.get(100_000)!;
  for (const mode of ["cold", "warm"] as const) {
    rows.push([
      name,
      mode,
      `${small[mode].toFixed(3)} ms`,
      `${large[mode].toFixed(3)} ms`,
      `${(large[mode] / small[mode]).toFixed(2)}x`,
      `${small.messages} / ${large.messages}`,
    ]);
  }
}
await postgres.stop();
printTable(["store", "mode", "1,000 entries", "100,000 entries", "ratio", "messages"], rows);
console.log("\nmedian per rebuild (ensureBootstrapAnchor + readMessages); target ratio <= 1.5x\n");
printTable(["store", "appends/s, 1,000-entry tape", "appends/s, 100,000-entry tape", "ratio"], appendRows);
console.log(`\nentries/s, median of ${APPEND_ROUNDS} rounds (the two tapes taking turns) of ${APPEND_BATCHES} batches of 8 entries appended one after the other`);
