import assert from "node:assert/strict";
import { appendFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
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
    const [mark, ...rest] = await lines();
    assert.deepEqual(rest, [], "compacted once everything is done");
    assert.equal(mark?.t, "mark");
    assert.equal(mark?.last, 8);
    assert.deepEqual(await journal.receive([{ id: 8, item: "y" }, { id: 7, item: "x" }]), [], "the ids seen are kept through compaction");
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
    assert.deepEqual((await lines()).map((line) => [line.t, line.last]), [["mark", 2]], "compacted at five lines");
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

  describe("InboundJournal deduplicates by id, not by the highest id", () => {
    it("takes an id below the highest that was never seen, after a restart, and refuses a repeat", async () => {
      const journal = await InboundJournal.open(path);
      for (const id of [2005, 2003, 2004]) assert.deepEqual(await journal.receive([{ id, item: { id } }]), [id]);
      await journal.done([2005, 2003, 2004]);
      await journal.close();
      const reopened = await InboundJournal.open(path);
      assert.equal(reopened.lastId, 2005, "polling still resumes past the highest id");
      assert.equal(reopened.has(2002), false);
      assert.deepEqual(await reopened.receive([{ id: 2002, item: "late" }]), [2002], "the late update is taken");
      assert.deepEqual(await reopened.receive([{ id: 2004, item: "again" }, { id: 2003, item: "again" }, { id: 2005, item: "again" }]), [], "repeats are refused");
      await reopened.close();
    });

    it("keeps the exact ids through a compaction without a restart", async () => {
      const journal = await InboundJournal.open(path, { compactAfterLines: 4 });
      await journal.receive([{ id: 2005, item: 5 }, { id: 2004, item: 4 }]);
      await journal.done([2005, 2004]);
      await journal.flush();
      assert.deepEqual((await lines()).map((record) => record.t), ["mark"], "compacted");
      assert.deepEqual(await journal.receive([{ id: 2003, item: 3 }, { id: 2004, item: 4 }]), [2003]);
      await journal.close();
    });

    it("compacts while an item is open and keeps it, with when it arrived", async () => {
      let now = 1_000;
      const journal = await InboundJournal.open(path, { compactAfterLines: 3, seen: { now: () => now } });
      await journal.receive([{ id: 10, item: "open" }]);
      now = 1_005;
      await journal.receive([{ id: 11, item: "done" }]);
      await journal.done([11]);
      await journal.flush();
      assert.deepEqual(await lines(), [
        { t: "mark", last: 11, seen: [[1_005, 11]] },
        { t: "received", id: 10, at: 1_000, item: "open" },
      ]);
      const reopened = await InboundJournal.open(path, { seen: { now: () => now } });
      assert.deepEqual(reopened.pending().map((entry) => entry.id), [10]);
      assert.ok(reopened.has(11));
      await Promise.all([journal.close(), reopened.close()]);
    });

    it("forgets an id a day and an hour after it arrived (Telegram resends for 24 h at most)", async () => {
      let now = 50_000;
      const seen = { now: () => now };
      const journal = await InboundJournal.open(path, { seen });
      await journal.receive([{ id: 1, item: "a" }]);
      await journal.done([1]);
      await journal.close();
      now += 25 * 3600;
      const dayLater = await InboundJournal.open(path, { seen });
      assert.ok(dayLater.has(1), "still remembered at the edge of the window");
      await dayLater.close();
      now += 1;
      const later = await InboundJournal.open(path, { seen });
      assert.equal(later.has(1), false, "forgotten past the window");
      assert.equal(later.lastId, 1);
      assert.deepEqual(await lines(), [{ t: "mark", last: 1, seen: [] }]);
      await later.close();
    });

    it("remembers at most the capped number of ids, and the file stays bounded", async () => {
      const journal = await InboundJournal.open(path, { compactAfterLines: 8, seen: { max: 20 } });
      let largest = 0;
      for (let id = 1; id <= 400; id++) {
        await journal.receive([{ id, item: { text: "x".repeat(40) } }]);
        await journal.done([id]);
        largest = Math.max(largest, (await readFile(path)).length);
      }
      const [mark] = await lines();
      const runs = Array.isArray(mark?.seen) ? mark.seen.filter((run) => Array.isArray(run)) : [];
      assert.equal(runs.reduce((sum, run) => sum + run.length - 1, 0), 20, "the mark lists 20 ids");
      assert.ok(journal.has(400) && journal.has(381) && !journal.has(380) && !journal.has(1), "the newest 20");
      assert.ok(largest < 4_000, `the file stayed small (largest ${largest} bytes)`);
      await journal.close();
    });

    it("compacts a journal that is never idle (an item stays open), so the file stays bounded", async () => {
      const journal = await InboundJournal.open(path, { compactAfterLines: 8 });
      await journal.receive([{ id: 1, item: { text: "a turn that runs for a long time" } }]);
      let largest = 0;
      for (let id = 2; id <= 300; id++) {
        await journal.receive([{ id, item: { text: "x".repeat(40) } }]);
        await journal.done([id]);
        largest = Math.max(largest, (await readFile(path)).length);
      }
      assert.ok(largest < 8_000, `the file stayed small (largest ${largest} bytes)`);
      assert.deepEqual(journal.pending().map((entry) => entry.id), [1]);
      const reopened = await InboundJournal.open(path);
      assert.deepEqual(reopened.pending().map((entry) => entry.id), [1], "the open item survives every compaction");
      assert.ok(reopened.has(2) && reopened.has(300));
      await Promise.all([journal.close(), reopened.close()]);
    });

    it("reads a mark written before ids were remembered as the polling offset only", async () => {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, '{"t":"mark","last":300}\n{"t":"received","id":305,"item":"b"}\n{"t":"done","id":305}\n');
      const journal = await InboundJournal.open(path);
      assert.equal(journal.lastId, 305);
      assert.ok(journal.has(305));
      assert.deepEqual(await journal.receive([{ id: 299, item: "a" }]), [299]);
      await journal.close();
    });
  });
});
