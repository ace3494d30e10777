// The name index (tape name → session id, workspace) of every store, and how the tapes
// service fills it when a session tape is first used.
import assert from "node:assert/strict";
import { appendFile, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { createFileTapeStore } from "../../src/tape/file-store.ts";
import { createFileNameIndex, NAME_INDEX_FILE, parseNameIndex } from "../../src/tape/file-name-index.ts";
import { REMEMBERED_TAPE_NAMES } from "../../src/tape/recorded-names.ts";
import { createMemoryTapeStore } from "../../src/tape/memory-store.ts";
import { createSqliteTapeStore } from "../../src/tape/sqlite-store.ts";
import { createTapes, resolveWorkspace, sessionTapeName } from "../../src/tape/tapes.ts";
import { captureLogs, storeFactories, tempDir } from "./support/helpers.ts";

for (const [storeName, makeStore] of storeFactories) {
  describe(`name index: ${storeName} store`, () => {
    it("keeps the first record of each tape and lists them all", async () => {
      const store = makeStore();
      await store.recordTapeName!({ tape: "aaaa__bbbb", sessionId: "cli:local", workspace: "/work/a" });
      await store.recordTapeName!({ tape: "aaaa__bbbb", sessionId: "changed", workspace: "/elsewhere" });
      await store.recordTapeName!({ tape: "cccc__dddd", sessionId: "telegram:42", workspace: "/work/b" });
      const names = (await store.tapeNames!()).sort((a, b) => a.tape.localeCompare(b.tape));
      assert.deepEqual(names, [
        { tape: "aaaa__bbbb", sessionId: "cli:local", workspace: "/work/a" },
        { tape: "cccc__dddd", sessionId: "telegram:42", workspace: "/work/b" },
      ]);
      await store.close?.();
    });

    it("learns a session tape the first time the tapes service names it, never a temp/ session's", async () => {
      const store = makeStore();
      const workspace = tempDir("workspace");
      const tapes = createTapes({ store, archivePath: tempDir("archive") });
      const tape = tapes.sessionTape("telegram:7", workspace);
      tapes.sessionTape("telegram:7", workspace);
      tapes.sessionTape("temp/abc", workspace);
      await store.close?.(); // waits for the background write (file store)
      const names = await store.tapeNames!();
      assert.deepEqual(names, [{ tape: tape.name, sessionId: "telegram:7", workspace: resolveWorkspace(workspace) }]);
      assert.equal(tape.name, sessionTapeName("telegram:7", workspace));
    });
  });
}

describe("name index: the file store's .index.jsonl", () => {
  it("appends one line per tape, readable by another store on the directory", async () => {
    const directory = join(tempDir("names"), "tapes");
    const writer = createFileTapeStore({ directory });
    await Promise.all([
      writer.recordTapeName({ tape: "a__b", sessionId: "one", workspace: "/w" }),
      writer.recordTapeName({ tape: "a__b", sessionId: "one", workspace: "/w" }),
      writer.recordTapeName({ tape: "c__d", sessionId: "two", workspace: "/w" }),
    ]);
    await writer.close();
    const lines = (await readFile(join(directory, NAME_INDEX_FILE), "utf8")).trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(lines.map(({ tape, session_id, workspace }) => ({ tape, session_id, workspace })), [
      { tape: "a__b", session_id: "one", workspace: "/w" },
      { tape: "c__d", session_id: "two", workspace: "/w" },
    ]);
    assert.match(String(lines[0]!.date), /^\d{4}-\d{2}-\d{2}T/);
    const reader = createFileTapeStore({ directory });
    assert.equal((await reader.tapeNames()).length, 2);
    assert.deepEqual(await reader.listTapes(), [], "the index is not a tape");
    await reader.close();
  });

  it("does not write a tape another process indexed already, and reads past malformed lines", async () => {
    const directory = join(tempDir("names"), "tapes");
    const first = createFileTapeStore({ directory });
    await first.recordTapeName({ tape: "a__b", sessionId: "one", workspace: "/w" });
    await first.close();
    await appendFile(join(directory, NAME_INDEX_FILE), '{"tape":"torn\nnot json\n{"tape":"x__y"}\n');
    const second = createFileTapeStore({ directory });
    await second.recordTapeName({ tape: "a__b", sessionId: "one", workspace: "/w" });
    await second.recordTapeName({ tape: "e__f", sessionId: "three", workspace: "/w" });
    await second.close();
    assert.deepEqual((await second.tapeNames()).map((record) => record.tape), ["a__b", "e__f"]);
    assert.equal((await readFile(join(directory, NAME_INDEX_FILE), "utf8")).split('"a__b"').length, 2, "a__b written once");
  });

  it("remembers a bounded number of recorded tapes: one forgotten is written again, harmlessly", async () => {
    assert.equal(REMEMBERED_TAPE_NAMES, 4096, "the documented bound");
    const directory = join(tempDir("names"), "tapes");
    const index = createFileNameIndex(directory, 3);
    for (const tape of ["a__1", "a__2", "a__3", "a__4"]) await index.record({ tape, sessionId: tape, workspace: "/w" });
    await index.record({ tape: "a__4", sessionId: "a__4", workspace: "/w" }); // remembered: no line
    await index.record({ tape: "a__1", sessionId: "a__1", workspace: "/w" }); // forgotten: a second line
    await index.flush();
    const tapes = (await readFile(join(directory, NAME_INDEX_FILE), "utf8")).trimEnd().split("\n").map((line) => String((JSON.parse(line) as Record<string, unknown>).tape));
    assert.deepEqual(tapes, ["a__1", "a__2", "a__3", "a__4", "a__1"]);
    assert.deepEqual((await index.read()).map((record) => record.tape), ["a__1", "a__2", "a__3", "a__4"], "the first line of a tape wins");
  });

  it("remembers only the newest lines of a long index it reads at start", async () => {
    const directory = join(tempDir("names"), "tapes");
    const writer = createFileNameIndex(directory);
    for (let n = 1; n <= 5; n++) await writer.record({ tape: `b__${n}`, sessionId: String(n), workspace: "/w" });
    const reader = createFileNameIndex(directory, 2);
    await reader.record({ tape: "b__5", sessionId: "5", workspace: "/w" }); // among the newest two: no line
    await reader.record({ tape: "b__1", sessionId: "1", workspace: "/w" }); // an old line, not kept in memory: written again
    await reader.flush();
    const lines = (await readFile(join(directory, NAME_INDEX_FILE), "utf8")).trimEnd().split("\n");
    assert.equal(lines.length, 6);
    assert.match(lines[5] ?? "", /"b__1"/);
  });

  it("parses the first record of a tape, skipping lines that are not records", () => {
    const text = ['{"tape":"a__b","session_id":"one","workspace":"/w"}', "", "garbage", '{"tape":"a__b","session_id":"two","workspace":"/v"}', '{"tape":"c__d","session_id":3,"workspace":"/w"}'].join("\n");
    assert.deepEqual(parseNameIndex(text), [{ tape: "a__b", sessionId: "one", workspace: "/w" }]);
  });

  it("never fails the caller when the index cannot be written", async () => {
    const parent = tempDir("names");
    await writeFile(join(parent, "tapes"), "a file where the directory should be");
    const store = createFileTapeStore({ directory: join(parent, "tapes") });
    const logs = captureLogs();
    try {
      await store.recordTapeName({ tape: "a__b", sessionId: "one", workspace: "/w" });
      await store.close();
    } finally {
      logs.restore();
    }
    assert.deepEqual(logs.records.map((record) => `${record.level} ${record.message.split(" path=")[0]}`), ["warn tape.name_index.failed"]);
  });
});

describe("name index: SQLite", () => {
  it("keeps the table across reopening the database", async () => {
    const path = join(tempDir("sqlite-names"), "tapes.sqlite3");
    const first = createSqliteTapeStore({ path });
    await first.recordTapeName({ tape: "a__b", sessionId: "one", workspace: "/w" });
    await first.close();
    const second = createSqliteTapeStore({ path });
    assert.deepEqual(await second.tapeNames(), [{ tape: "a__b", sessionId: "one", workspace: "/w" }]);
    await second.close();
  });
});

describe("name index: memory", () => {
  it("is empty for a new store", async () => {
    assert.deepEqual(await createMemoryTapeStore().tapeNames(), []);
  });
});
