import assert from "node:assert/strict";
import { appendFile, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import { InboundJournal } from "../../src/channels/inbound-journal.ts";
import { captureLogs, tempDir } from "../support/temp.ts";

describe("InboundJournal", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let path: string;
  beforeEach(async () => {
    dir = await tempDir();
    path = join(dir.path, "inbound", "telegram-1.jsonl");
  });
  afterEach(() => dir.cleanup());

  const lines = async () => (await readFile(path, "utf8")).split("\n").filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);

  it("appends received items durably and replays the ones not done after a reopen", async () => {
    const journal = await InboundJournal.open(path);
    assert.deepEqual(await journal.receive([{ id: 1, item: { text: "a" } }, { id: 2, item: { text: "b" } }, { id: 3, item: { text: "c" } }]), [1, 2, 3]);
    await journal.started([1, 2]);
    await journal.done([1]);
    assert.deepEqual((await lines()).map((record) => record.t), ["mark", "received", "received", "received", "started", "started", "done"]);
    // No close: as after kill -9, what was appended is what the next run reads.
    const reopened = await InboundJournal.open(path);
    assert.deepEqual(reopened.pending(), [
      { id: 2, item: { text: "b" }, started: true, starts: 1, retried: false },
      { id: 3, item: { text: "c" }, started: false, starts: 0, retried: false },
    ]);
    assert.equal(reopened.lastId, 3);
    await journal.close();
    await reopened.close();
  });

  it("records a retry and counts the runs that began, so a second cut-off run is known", async () => {
    const journal = await InboundJournal.open(path);
    await journal.receive([{ id: 5, item: {} }]);
    await journal.started([5]);
    await journal.retried([5]);
    await journal.close();
    const reopened = await InboundJournal.open(path);
    assert.deepEqual(reopened.pending(), [{ id: 5, item: {}, started: true, starts: 1, retried: true }]);
    await reopened.started([5]);
    const again = await InboundJournal.open(path);
    assert.deepEqual(again.pending(), [{ id: 5, item: {}, started: true, starts: 2, retried: true }], "the retry's start is counted (also through the compaction at open)");
    await Promise.all([reopened.close(), again.close()]);
  });

  it("does not record an item twice (dedupe by id), also after compaction", async () => {
    const journal = await InboundJournal.open(path, { compactAfterLines: 1 });
    assert.deepEqual(await journal.receive([{ id: 7, item: "x" }]), [7]);
    assert.deepEqual(await journal.receive([{ id: 7, item: "x" }, { id: 8, item: "y" }]), [8]);
    await journal.done([7, 8]);
    await journal.flush();
    assert.deepEqual(await lines(), [{ t: "mark", last: 8 }], "compacted once everything is done");
    assert.deepEqual(await journal.receive([{ id: 8, item: "y" }, { id: 6, item: "old" }]), [], "ids up to the mark are known");
    assert.ok(journal.has(8));
    await journal.close();
    const reopened = await InboundJournal.open(path);
    assert.equal(reopened.lastId, 8);
    assert.deepEqual(reopened.pending(), []);
    assert.deepEqual(await reopened.receive([{ id: 8, item: "y" }, { id: 9, item: "z" }]), [9]);
    await reopened.close();
  });

  it("compacts an idle journal only once enough has been written, and knows done ids until then", async () => {
    const journal = await InboundJournal.open(path, { compactAfterLines: 5 });
    await journal.receive([{ id: 1, item: "a" }]);
    void journal.started([1]);
    await journal.done([1]);
    await journal.flush();
    assert.deepEqual((await lines()).map((line) => line.t), ["mark", "received", "started", "done"], "three lines written: not compacted yet");
    assert.deepEqual(await journal.receive([{ id: 1, item: "a" }]), [], "a done id is still known");
    await journal.receive([{ id: 2, item: "b" }]);
    await journal.done([2]);
    await journal.flush();
    assert.deepEqual(await lines(), [{ t: "mark", last: 2 }], "compacted at five lines");
    await journal.close();
  });

  it("keeps a started record once a later record is synced", async () => {
    const journal = await InboundJournal.open(path);
    await journal.receive([{ id: 3, item: "c" }]);
    void journal.started([3]);
    await journal.receive([{ id: 4, item: "d" }]);
    await journal.close();
    const reopened = await InboundJournal.open(path);
    assert.deepEqual(reopened.pending().map((entry) => [entry.id, entry.started]), [[3, true], [4, false]]);
    await reopened.close();
  });

  it("batches records that arrive together into one write", async () => {
    const journal = await InboundJournal.open(path);
    await Promise.all(Array.from({ length: 50 }, (_, index) => journal.receive([{ id: index + 1, item: index }])));
    const reopened = await InboundJournal.open(path);
    assert.equal(reopened.pending().length, 50);
    await Promise.all([journal.close(), reopened.close()]);
  });

  it("ignores a torn last line and rewrites the file without it", async () => {
    const journal = await InboundJournal.open(path);
    await journal.receive([{ id: 1, item: "a" }, { id: 2, item: "b" }]);
    await journal.close();
    await appendFile(path, '{"t":"done","id":1');
    const { result: reopened, logs } = await captureLogs(() => InboundJournal.open(path));
    assert.deepEqual(reopened.pending().map((entry) => entry.id), [1, 2]);
    assert.ok(logs.some((entry) => entry.level === "warn" && /ignored 1 unreadable line/.test(entry.message)));
    await reopened.done([1]);
    const again = await InboundJournal.open(path);
    assert.deepEqual(again.pending().map((entry) => entry.id), [2], "the append after the torn line is readable");
    await Promise.all([reopened.close(), again.close()]);
  });

  it("starts empty when the file is missing or holds garbage", async () => {
    const journal = await InboundJournal.open(path);
    assert.deepEqual(journal.pending(), []);
    assert.equal(journal.lastId, 0);
    await journal.close();
    await writeFile(path, "not json\n[1,2]\n");
    const { result: reopened } = await captureLogs(() => InboundJournal.open(path));
    assert.deepEqual(reopened.pending(), []);
    await reopened.close();
  });
});
