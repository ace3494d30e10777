// Per-tape stats for `bub tape list`: the file store's byte scan, the SQLite query and the
// generic count from entries agree, on tapes with turn ids, without them, and damaged ones.
import assert from "node:assert/strict";
import { appendFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { withCorrelation } from "../../src/kernel/correlation.ts";
import type { NewTapeEntry, TapeStore } from "../../src/kernel/tape-contract.ts";
import { encodeEntry, entries, prepareEntry } from "../../src/tape/entry.ts";
import { createFileTapeStore } from "../../src/tape/file-store.ts";
import { scanTapeBytes, scanTapeFile } from "../../src/tape/file-tape-stats.ts";
import { createMemoryTapeStore } from "../../src/tape/memory-store.ts";
import { createSqliteTapeStore } from "../../src/tape/sqlite-store.ts";
import { statsOfEntries, tapeStatsOf } from "../../src/tape/tape-stats.ts";
import { countTurns } from "../../src/tape/turns.ts";
import { tempDir } from "./support/helpers.ts";

/** Entries written in turn `turnId` (as a turn writes them: the ids go into meta). */
function inTurn(turnId: string, batch: NewTapeEntry[]): NewTapeEntry[] {
  return withCorrelation({ turnId }, () => batch.map((entry) => prepareEntry(entry) as NewTapeEntry));
}

/** Two turns with ids (the first one's entries in two parts), then a legacy turn, a command, and loose entries. */
function mixedTape(): NewTapeEntry[] {
  return [
    entries.anchor("session/start", { owner: "human" }), // legacy bootstrap: before any turn
    entries.event("loop.start", { prompt: "old turn" }), // legacy turn 1
    entries.message({ role: "user", content: 'text that looks like meta: "meta":{"turn_id":"fake"}' }),
    entries.event("command", { raw: "help", status: "ok" }), // legacy turn 2
    ...inTurn("turn-a", [entries.event("loop.start", { prompt: "a" }), entries.message({ role: "user", content: "a" })]), // turn 3
    ...inTurn("turn-b", [entries.event("loop.start", { prompt: "b" }), entries.toolResult([{ turn_id: "payload-object" }])]), // turn 4
    ...inTurn("turn-a", [entries.event("late", { part: 2 })]), // turn-a again: not a new turn
    entries.event("loose"), // belongs to the turn before
  ];
}

const EXPECTED_TURNS = 4;

async function fill(store: TapeStore, tape: string, batch: NewTapeEntry[]): Promise<void> {
  await store.appendBatch!(tape, batch);
}

describe("tape stats", () => {
  it("counts turns by turn id, else by loop.start and command events", () => {
    const stored = mixedTape().map((entry, index) => ({ ...prepareEntry(entry), id: index + 1 }));
    assert.equal(countTurns(stored), EXPECTED_TURNS);
  });

  for (const [name, make] of [
    ["file", () => createFileTapeStore({ directory: join(tempDir("stats"), "tapes") })],
    ["sqlite", () => createSqliteTapeStore({ path: join(tempDir("stats"), "tapes.sqlite3") })],
    ["memory (from entries)", () => createMemoryTapeStore()],
  ] as const) {
    it(`gives entries, turns, last date and size per session tape: ${name}`, async () => {
      const store = make();
      await fill(store, "aaaa__bbbb", mixedTape());
      await fill(store, "cccc__dddd", [entries.event("only")]);
      await fill(store, "aaaa__bbbb__sidecar__spill", [entries.event("not listed")]);
      const stats = await tapeStatsOf(store);
      const all = await store.fetchAll({ tape: "aaaa__bbbb" });
      assert.deepEqual(
        stats.map(({ tape, entries: count, turns, lastDate }) => ({ tape, count, turns, lastDate })),
        [
          { tape: "aaaa__bbbb", count: all.length, turns: EXPECTED_TURNS, lastDate: all.at(-1)!.date },
          { tape: "cccc__dddd", count: 1, turns: 0, lastDate: (await store.fetchAll({ tape: "cccc__dddd" }))[0]!.date },
        ],
      );
      assert.ok(stats[0]!.bytes! > 500);
      await store.close?.();
    });
  }

  it("scans a file like the generic count: the size is the file's", async () => {
    const directory = join(tempDir("stats"), "tapes");
    const store = createFileTapeStore({ directory });
    await fill(store, "aaaa__bbbb", mixedTape());
    const generic = statsOfEntries("aaaa__bbbb", await store.fetchAll({ tape: "aaaa__bbbb" }));
    const scanned = scanTapeFile(directory, "aaaa__bbbb")!;
    assert.deepEqual({ ...scanned, bytes: null }, { ...generic, bytes: null });
    assert.equal(scanned.bytes, generic.bytes, "JSON text plus a newline per entry is the file");
    assert.equal(scanTapeFile(directory, "gone__gone"), null);
    await store.close();
  });

  it("reads lines as the reference runtime writes them (spaces after separators, no turn ids)", () => {
    const lines = [
      '{"id": 1, "kind": "anchor", "payload": {"name": "session/start"}, "meta": {}, "date": "2026-01-02T03:04:05.000001+00:00"}',
      '{"id": 2, "kind": "event", "payload": {"name": "loop.start", "data": {}}, "meta": {}, "date": "2026-01-02T03:04:06.000001+00:00"}',
      '{"id": 3, "kind": "message", "payload": {"role": "user", "content": "hi"}, "meta": {"run_id": "r"}, "date": "2026-01-02T03:04:07.000001+00:00"}',
    ];
    assert.deepEqual(scanTapeBytes(Buffer.from(`${lines.join("\n")}\n`)), { entries: 3, turns: 1, lastDate: "2026-01-02T03:04:07.000001+00:00" });
  });

  it("skips a torn last line and lines that are not entries", () => {
    const good = (id: number, turn: string) => withCorrelation({ turnId: turn }, () => encodeEntry(id, prepareEntry(entries.event("e"))));
    const text = `${good(1, "t1")}\nnot json at all\n\n${good(2, "t2")}\n{"id":3,"kind":"event","payl`;
    const scanned = scanTapeBytes(Buffer.from(text));
    assert.equal(scanned.entries, 2);
    assert.equal(scanned.turns, 2);
    assert.deepEqual(scanTapeBytes(Buffer.alloc(0)), { entries: 0, turns: 0, lastDate: null });
  });

  it("scans a file larger than its read buffer, with a line longer than the buffer", async () => {
    const directory = tempDir("stats-big");
    const long = "x".repeat(3 << 20); // 3 MiB: longer than the 1 MiB read buffer
    const lines: string[] = [];
    let id = 0;
    for (let turn = 0; turn < 60; turn++) {
      const batch = inTurn(`turn-${turn}`, [entries.event("loop.start"), entries.message({ role: "user", content: turn === 30 ? long : "y".repeat(40_000) })]);
      for (const entry of batch) lines.push(encodeEntry(++id, prepareEntry(entry)));
    }
    await writeFile(join(directory, "big__tape.jsonl"), `${lines.join("\n")}\n`);
    const scanned = scanTapeFile(directory, "big__tape")!;
    assert.equal(scanned.entries, 120);
    assert.equal(scanned.turns, 60);
    assert.ok(scanned.bytes! > 5 << 20);
    // A file whose last line has no newline yet.
    await appendFile(join(directory, "big__tape.jsonl"), encodeEntry(121, prepareEntry(entries.event("tail"))));
    assert.equal(scanTapeFile(directory, "big__tape")!.entries, 121);
  });
});
