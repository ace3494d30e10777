// The JSONL file store beyond the shared contract: file format, damaged and foreign files,
// incremental reads across store objects, the anchor index and file-system failures.
import assert from "node:assert/strict";
import { appendFileSync, chmodSync, existsSync, readdirSync, readFileSync, readlinkSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { setImmediate as nextTurn } from "node:timers/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { NewTapeEntry, TapeEntry, TapeQuery } from "../../src/kernel/tape-contract.ts";
import { entries } from "../../src/tape/entry.ts";
import { createFileTapeStore } from "../../src/tape/file-store.ts";
import { createGroupCommit } from "../../src/tape/group-commit.ts";
import { runQuery } from "../../src/tape/query-engine.ts";
import { bubError, captureLogs, tempDir } from "./support/helpers.ts";

const TAPE = "1111__2222";

function setup() {
  const directory = tempDir("file-store");
  return { directory, file: join(directory, `${TAPE}.jsonl`), open: () => createFileTapeStore({ directory }) };
}

const names = (found: TapeEntry[]) => found.map((entry) => entry.payload.name);

describe("file store: format", () => {
  it("writes one JSON entry per line, non-ASCII unescaped, and creates the directory on first append", async () => {
    const directory = join(tempDir("format"), "nested", "tapes");
    const store = createFileTapeStore({ directory });
    assert.deepEqual(await store.listTapes(), []);
    assert.equal(existsSync(directory), false);
    const stored = await store.append(TAPE, entries.message({ role: "user", content: "naïve 🙂" }));
    const text = readFileSync(join(directory, `${TAPE}.jsonl`), "utf8");
    assert.equal(text, `${JSON.stringify(stored)}\n`);
    assert.ok(text.includes("naïve 🙂"));
    assert.deepEqual(Object.keys(JSON.parse(text)), ["id", "kind", "payload", "meta", "date"]);
    await store.close();
  });

  it("lists only *.jsonl stems with exactly one '__'", async () => {
    const { directory, open } = setup();
    for (const name of ["a__b.jsonl", "c__d__sidecar__spill.jsonl", "plain.jsonl", "x__y.jsonl.20260101T000000Z.bak", "e__f.txt", "g__h.jsonl"]) {
      writeFileSync(join(directory, name), "");
    }
    assert.deepEqual(await open().listTapes(), ["a__b", "g__h"]);
  });

  it("refuses tape names that are not file names", async () => {
    const { open } = setup();
    const store = open();
    await assert.rejects(store.append("../escape", entries.event("x")), bubError("invalid_input", /cannot be used as a file name/));
    await assert.rejects(store.fetchAll({ tape: "a/b" }), bubError("invalid_input", /cannot be used as a file name/));
  });
});

describe("file store: damaged and foreign files", () => {
  it("never serves a torn last line, and seals it with a newline on the next append", async () => {
    const { file, open } = setup();
    const logs = captureLogs();
    try {
      const store = open();
      await store.appendBatch(TAPE, [entries.anchor("start"), entries.event("one")]);
      const before = readFileSync(file);
      appendFileSync(file, '{"id": 3, "kind": "event", "payl');
      const fresh = open();
      assert.deepEqual(names(await fresh.fetchAll({ tape: TAPE })), ["start", "one"]);
      assert.deepEqual(names(await store.fetchAll({ tape: TAPE })), ["start", "one"]);
      const next = await fresh.append(TAPE, entries.event("two"));
      assert.equal(next.id, 3);
      const after = readFileSync(file);
      assert.deepEqual(after.subarray(0, before.length), before, "nothing already written was rewritten");
      const lines = after.toString("utf8").split("\n");
      assert.equal(lines[2], '{"id": 3, "kind": "event", "payl');
      assert.deepEqual(JSON.parse(lines[3]!), next);
      assert.deepEqual(names(await store.fetchAll({ tape: TAPE })), ["start", "one", "two"]);
      assert.deepEqual(await fresh.skippedLines(TAPE), [{ offset: before.length, reason: "torn line: an earlier write was interrupted" }]);
      assert.deepEqual(await store.skippedLines(TAPE), [{ offset: before.length, reason: "not valid JSON" }]);
      assert.equal(logs.records.filter((record) => record.message.startsWith("tape.line_skipped")).length, 2);
    } finally {
      logs.restore();
    }
  });

  it("skips malformed lines with one warning each and keeps unknown kinds", async () => {
    const { file, open } = setup();
    const good = (id: number, kind = "event") => JSON.stringify({ id, kind, payload: { name: `n${id}` }, meta: {}, date: "2026-01-01T00:00:00.000000+00:00" });
    writeFileSync(
      file,
      [good(1), "not json", "", "   ", '{"hello": "world"}', "[1,2,3]", '{"id": "2", "kind": "event", "payload": {}}', '{"id": 2, "kind": 5, "payload": {}}', '{"id": 2, "kind": "x", "payload": []}', good(2, "martian"), '{"id": 3, "kind": "event", "payload": {"name": "n3"}, "meta": [1], "date": "2026-01-01T00:00:00+00:00"}'].join("\n") + "\n",
    );
    const logs = captureLogs();
    try {
      const store = open();
      const found = await store.fetchAll({ tape: TAPE });
      assert.deepEqual(found.map((entry) => [entry.id, entry.kind]), [[1, "event"], [2, "martian"], [3, "event"]]);
      assert.deepEqual(found[2]!.meta, {});
      await store.fetchAll({ tape: TAPE });
      const skipped = await store.skippedLines(TAPE);
      assert.deepEqual(skipped.map((line) => line.reason), ["not valid JSON", "id is not an integer", "not a JSON object", "id is not an integer", "kind is not a string", "payload is not an object"]);
      assert.equal(logs.records.filter((record) => record.level === "warn").length, 6, "each bad line is reported once");
      assert.equal((await store.append(TAPE, entries.event("n4"))).id, 4);
    } finally {
      logs.restore();
    }
  });

  it("reads a legacy line that has a timestamp instead of a date", async () => {
    const { file, open } = setup();
    writeFileSync(file, '{"id": 1, "kind": "event", "payload": {"name": "old"}, "meta": {}, "timestamp": 1767312245.5}\n');
    const [entry] = await open().fetchAll({ tape: TAPE });
    assert.equal(entry!.date, "2026-01-02T00:04:05.500000+00:00");
  });

  it("serves a complete last entry that lacks its newline, and appends after a newline", async () => {
    const { file, open } = setup();
    const line = JSON.stringify({ id: 1, kind: "anchor", payload: { name: "start" }, meta: {}, date: "2026-01-01T00:00:00.000000+00:00" });
    writeFileSync(file, line);
    const store = open();
    assert.deepEqual(names(await store.fetchAll({ tape: TAPE })), ["start"]);
    assert.deepEqual(names(await store.fetchAll({ tape: TAPE, text: "START" })), ["start"]);
    assert.deepEqual(await store.fetchAll({ tape: TAPE, lastAnchor: true }), []);
    const next = await store.append(TAPE, entries.event("after"));
    assert.equal(next.id, 2);
    assert.equal(readFileSync(file, "utf8"), `${line}\n${JSON.stringify(next)}\n`);
    assert.deepEqual(names(await store.fetchAll({ tape: TAPE, lastAnchor: true })), ["after"]);
    assert.deepEqual(names(await store.fetchAll({ tape: TAPE, text: "a" })), ["after", "start"]);
    assert.deepEqual(await store.skippedLines(TAPE), []);
  });

  it("survives a file of binary garbage: lines skipped, appends never rewrite it", async () => {
    const { file, open } = setup();
    const garbage = Buffer.from(Array.from({ length: 5000 }, (_, index) => (index * 7919 + 13) % 256));
    writeFileSync(file, garbage);
    const logs = captureLogs();
    try {
      const store = open();
      assert.deepEqual(await store.fetchAll({ tape: TAPE }), []);
      await assert.rejects(store.fetchAll({ tape: TAPE, lastAnchor: true }), bubError("not_found", "No anchors found in tape."));
      const stored = await store.append(TAPE, entries.event("mine"));
      assert.equal(stored.id, 1);
      assert.deepEqual(readFileSync(file).subarray(0, garbage.length), garbage);
      assert.deepEqual(await open().fetchAll({ tape: TAPE }), [stored]);
      assert.ok((await store.skippedLines(TAPE)).length > 0);
    } finally {
      logs.restore();
    }
  });
});

describe("file store: several readers and writers", () => {
  it("sees entries appended by another store object and continues their ids", async () => {
    const { open } = setup();
    const first = open();
    const second = open();
    await first.append(TAPE, entries.anchor("a"));
    await second.appendBatch(TAPE, [entries.event("from second"), entries.anchor("b")]);
    const mine = await first.append(TAPE, entries.event("from first"));
    assert.equal(mine.id, 4);
    assert.deepEqual(names(await first.fetchAll({ tape: TAPE, lastAnchor: true })), ["from first"]);
    assert.deepEqual(names(await second.fetchAll({ tape: TAPE, afterAnchor: "a" })), ["from second", "b", "from first"]);
  });

  it("interleaves appends of two store objects with unique increasing ids", async () => {
    const { open } = setup();
    const stores = [open(), open()];
    await Promise.all(stores.flatMap((store, which) => Array.from({ length: 30 }, (_, index) => store.append(TAPE, entries.event(`s${which}-${index}`)))));
    const found = await open().fetchAll({ tape: TAPE });
    assert.deepEqual(found.map((entry) => entry.id), Array.from({ length: 60 }, (_, index) => index + 1));
  });

  it("notices a reset by another store object and a file that shrank or was replaced", async () => {
    const { file, open } = setup();
    const first = open();
    const second = open();
    await first.appendBatch(TAPE, [entries.anchor("a"), entries.event("x"), entries.event("y")]);
    assert.equal((await first.fetchAll({ tape: TAPE })).length, 3);
    await second.reset(TAPE);
    assert.deepEqual(await first.fetchAll({ tape: TAPE }), []);
    assert.equal((await first.append(TAPE, entries.event("fresh"))).id, 1);
    await first.appendBatch(TAPE, [entries.event("b"), entries.event("c")]);
    const keep = readFileSync(file, "utf8").split("\n")[0]!;
    truncateSync(file, 0);
    writeFileSync(file, `${keep}\n`);
    assert.deepEqual(names(await first.fetchAll({ tape: TAPE })), ["fresh"]);
    assert.equal((await first.append(TAPE, entries.event("next"))).id, 2);
  });

  it("tells whether a tape still ends with an entry, and no longer after another writer, a reset or a truncation", async () => {
    const { file, open } = setup();
    const first = open();
    const second = open();
    assert.equal(await first.endsAt({ tape: TAPE, id: 0, date: "" }), false, "a tape that does not exist");
    const [, last] = await first.appendBatch(TAPE, [entries.anchor("a"), entries.event("x")]);
    assert.ok(last);
    assert.equal(await first.endsAt({ tape: TAPE, id: last.id, date: last.date }), true);
    assert.equal(await first.endsAt({ tape: TAPE, id: last.id, date: "2000-01-01T00:00:00.000+00:00" }), false, "another entry with that id");
    assert.equal(await first.endsAt({ tape: TAPE, id: last.id - 1, date: last.date }), false, "an entry that is not the last");
    // A store object that has not read the tape cannot tell without reading.
    const fresh = open();
    assert.equal(await fresh.endsAt({ tape: TAPE, id: last.id, date: last.date }), false);
    await fresh.close();

    const theirs = await second.append(TAPE, entries.event("from second"));
    assert.equal(await first.endsAt({ tape: TAPE, id: last.id, date: last.date }), false, "another store object appended");
    assert.equal(await first.endsAt({ tape: TAPE, id: theirs.id, date: theirs.date }), true, "it read the new line");

    const kept = readFileSync(file, "utf8").split("\n")[0]!;
    truncateSync(file, 0);
    writeFileSync(file, `${kept}\n`);
    assert.equal(await first.endsAt({ tape: TAPE, id: theirs.id, date: theirs.date }), false, "truncated by a process that takes no lock");

    const mine = await first.append(TAPE, entries.event("y"));
    assert.equal(await first.endsAt({ tape: TAPE, id: mine.id, date: mine.date }), true);
    await second.reset(TAPE);
    assert.equal(await first.endsAt({ tape: TAPE, id: mine.id, date: mine.date }), false, "reset by another store object");
    await first.close();
    await second.close();
  });
});

describe("file store: the anchor index", () => {
  function tapeEntries(): NewTapeEntry[] {
    const out: NewTapeEntry[] = [];
    for (let index = 0; index < 1200; index++) {
      if (index % 97 === 0) out.push(entries.anchor(index % 2 ? "odd" : "even", { index }));
      if (index === 600) out.push(entries.event("huge", { blob: "x".repeat(200_000) }));
      out.push(entries.message({ role: index % 3 ? "user" : "assistant", content: `message ${index} ${"·".repeat(index % 50)}` }));
    }
    out.push(entries.anchor("odd", { index: "last" }), entries.message({ role: "user", content: "tail" }));
    return out;
  }

  const queries = (tape: string): TapeQuery[] => [
    { tape },
    { tape, lastAnchor: true },
    { tape, afterAnchor: "odd" },
    { tape, afterAnchor: "even" },
    { tape, betweenAnchors: { start: "even", end: "odd" } },
    { tape, afterAnchor: "even", kinds: ["message"], limit: 5 },
    { tape, kinds: ["anchor"] },
    { tape, text: "MESSAGE 11", limit: 4 },
    { tape, lastAnchor: true, limit: 0 },
  ];

  /** The entries a query returns, or the message of the error it raises. */
  async function outcome(read: () => TapeEntry[] | Promise<TapeEntry[]>): Promise<TapeEntry[] | string> {
    try {
      return await read();
    } catch (error) {
      return (error as Error).message;
    }
  }

  it("answers every query like a whole-tape scan, on fresh and on warm store objects", async () => {
    const { open } = setup();
    const writer = open();
    const all: TapeEntry[] = [];
    const source = tapeEntries();
    for (let start = 0; start < source.length; start += 100) all.push(...(await writer.appendBatch(TAPE, source.slice(start, start + 100))));
    await writer.close();
    const warm = open();
    for (const query of queries(TAPE)) {
      const expected = await outcome(() => runQuery(all, query));
      assert.ok(Array.isArray(expected), `the query ${JSON.stringify(query)} is valid`);
      assert.deepEqual(await outcome(() => open().fetchAll(query)), expected, `cold ${JSON.stringify(query)}`);
      assert.deepEqual(await outcome(() => warm.fetchAll(query)), expected, `warm ${JSON.stringify(query)}`);
    }
    const more = await warm.appendBatch(TAPE, [entries.anchor("even"), entries.event("new")]);
    all.push(...more);
    for (const query of queries(TAPE)) {
      const expected = await outcome(() => runQuery(all, query));
      assert.deepEqual(await outcome(() => warm.fetchAll(query)), expected, `after append ${JSON.stringify(query)}`);
      assert.deepEqual(await outcome(() => open().fetchAll(query)), expected, `cold after append ${JSON.stringify(query)}`);
    }
    await assert.rejects(open().fetchAll({ tape: TAPE, afterAnchor: "never" }), bubError("not_found", "Anchor 'never' was not found."));
  });
});

describe("file store: file-system failures", () => {
  it("reports a full disk with a clear error and keeps working afterwards", async () => {
    const { directory, open } = setup();
    if (!existsSync("/dev/full")) return;
    symlinkSync("/dev/full", join(directory, `${TAPE}.jsonl`));
    const store = open();
    await assert.rejects(store.append(TAPE, entries.event("x")), bubError("temporary", new RegExp(`Cannot append to tape file .*${TAPE}\\.jsonl: the disk is full \\(ENOSPC\\)`)));
    assert.equal((await store.append("other__tape", entries.event("fine"))).id, 1);
  });

  it("reports a tapes directory that is not a directory", async () => {
    const base = tempDir("notdir");
    const directory = join(base, "tapes");
    writeFileSync(directory, "I am a file");
    const store = createFileTapeStore({ directory });
    await assert.rejects(store.append(TAPE, entries.event("x")), bubError("config", /a path component is not what it should be/));
    await assert.rejects(store.fetchAll({ tape: TAPE }), bubError("config", /Cannot read tape file .*ENOTDIR/));
    assert.equal(readFileSync(directory, "utf8"), "I am a file");
  });

  it("reports a read-only tapes directory", { skip: process.getuid?.() === 0 ? "root ignores file permissions" : false }, async () => {
    const { directory, open } = setup();
    await open().append(TAPE, entries.event("before"));
    chmodSync(directory, 0o555);
    chmodSync(join(directory, `${TAPE}.jsonl`), 0o444);
    try {
      await assert.rejects(open().append("new__tape", entries.event("x")), bubError("config", /read-only or access is denied|lock/));
      await assert.rejects(open().append(TAPE, entries.event("x")), bubError("config", /read-only or access is denied|lock/));
      assert.equal((await open().fetchAll({ tape: TAPE })).length, 1);
    } finally {
      chmodSync(directory, 0o755);
    }
  });
});

describe("group commit", () => {
  it("fails every write a failed sync covered, for good", async () => {
    const commit = createGroupCommit(2_000_000_000);
    const first = commit.noteWrite();
    const second = commit.noteWrite();
    await assert.rejects(commit.flush(second), { code: "EBADF" });
    await assert.rejects(commit.flush(first), { code: "EBADF" });
    assert.equal(commit.busy, false);
    const third = commit.noteWrite();
    await assert.rejects(commit.flush(third), { code: "EBADF" });
    await commit.idle();
  });
});

describe("file store with many tapes", () => {
  it("closes and forgets the least recently used files past its bounds, and reads and appends to them correctly later", async () => {
    const directory = tempDir("many-tapes");
    const store = createFileTapeStore({ directory, maxOpenFiles: 2 });
    const tapes = Array.from({ length: 12 }, (_, index) => `t${index}__s`);
    for (const tape of tapes) await store.appendBatch(tape, [entries.anchor("session/start"), entries.event("first", { tape })]);
    for (const tape of tapes) await store.append(tape, entries.event("second", { tape }));
    for (const tape of tapes) {
      const found = await store.fetchAll({ tape });
      assert.deepEqual(found.map((entry) => [entry.id, entry.payload.name]), [[1, "session/start"], [2, "first"], [3, "second"]], tape);
      assert.deepEqual((await store.fetchAll({ tape, lastAnchor: true })).map((entry) => entry.id), [2, 3]);
    }
    await store.close();
  });

  it("keeps at most maxOpenFiles tape files open, whichever calls used them", { skip: existsSync("/proc/self/fd") ? false : "needs /proc/self/fd" }, async () => {
    const directory = tempDir("open-files");
    const store = createFileTapeStore({ directory, maxOpenFiles: 3 });
    const openTapeFiles = () =>
      readdirSync("/proc/self/fd").filter((fd) => {
        try {
          const target = readlinkSync(`/proc/self/fd/${fd}`);
          return target.startsWith(directory) && target.endsWith(".jsonl") && !target.endsWith(".index.jsonl");
        } catch {
          return false; // the descriptor readdir itself used
        }
      }).length;
    const tapes = Array.from({ length: 40 }, (_, index) => `t${index}__s`);
    for (const tape of tapes) await store.append(tape, entries.event("x"));
    for (const tape of tapes) await store.endsAt({ tape, id: 1, date: "" });
    for (const tape of tapes) await store.fetchAll({ tape });
    // Handles past the bound are closed in the background, once no sync needs them.
    for (let turn = 0; turn < 200 && openTapeFiles() > 3; turn++) await nextTurn();
    assert.ok(openTapeFiles() <= 3, `${openTapeFiles()} tape files open`);
    assert.equal((await store.append("t0__s", entries.event("y"))).id, 2);
    await store.close();
  });
});
