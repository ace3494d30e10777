import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { TapeIndex } from "../../src/tape/tape-index.ts";
import { captureLogs, tempDir } from "./support/helpers.ts";

const DATE = "2026-01-02T03:04:05.000000+00:00";
const line = (id: number, kind = "message", payload: Record<string, unknown> = { role: "user", content: `m${id}` }) => JSON.stringify({ id, kind, payload, meta: {}, date: DATE });
const anchor = (id: number, name: string) => line(id, "anchor", { name });

/** A tape file holding `text`, open for reading, with an index brought up to date. */
async function indexed(text: string) {
  const path = join(tempDir("index"), "t.jsonl");
  writeFileSync(path, text);
  const fd = await open(path, "r");
  const index = new TapeIndex(path);
  const refresh = async () => index.update(fd, (await fd.stat()).size);
  await refresh();
  return { path, fd, index, refresh, close: () => fd.close() };
}

describe("TapeIndex", () => {
  it("starts at the end of the file and indexes backwards only as far as a question needs", async () => {
    const logs = captureLogs();
    try {
      const { fd, index, close } = await indexed(`${line(1)}\nnot json\n${anchor(2, "a")}\n${line(3)}\n`);
      assert.deepEqual(await index.rangeOf(fd, { mode: "last" }), { start: Buffer.byteLength(`${line(1)}\nnot json\n${anchor(2, "a")}\n`), end: index.size });
      assert.equal(logs.records.length, 0, "the malformed line before the last anchor was not read");
      assert.equal(await index.nextId(fd), 4);
      assert.deepEqual(await index.skippedLines(fd), [{ offset: Buffer.byteLength(`${line(1)}\n`), reason: "not valid JSON" }]);
      assert.equal(logs.records.filter((record) => record.level === "warn").length, 1);
      await close();
    } finally {
      logs.restore();
    }
  });

  it("finds the byte ranges of anchor slices, and says which anchor is missing", async () => {
    const text = `${anchor(1, "a")}\n${line(2)}\n${anchor(3, "b")}\n${line(4)}\n${anchor(5, "a")}\n`;
    const { fd, index, close } = await indexed(text);
    const endOf = (upTo: number) => Buffer.byteLength(text.split("\n").slice(0, upTo).join("\n") + "\n");
    assert.deepEqual(await index.rangeOf(fd, { mode: "all" }), { start: 0, end: endOf(5) });
    assert.deepEqual(await index.rangeOf(fd, { mode: "after", name: "b" }), { start: endOf(3), end: endOf(5) });
    assert.deepEqual(await index.rangeOf(fd, { mode: "after", name: "a" }), { start: endOf(5), end: endOf(5) }, "the newest anchor of a name");
    assert.deepEqual(await index.rangeOf(fd, { mode: "between", start: "b", end: "a" }), { start: endOf(3), end: endOf(4) });
    await assert.rejects(() => index.rangeOf(fd, { mode: "after", name: "zzz" }), /zzz/);
    await assert.rejects(() => index.rangeOf(fd, { mode: "between", start: "a", end: "b" }), /b/);
    await close();
    const empty = await indexed(`${line(1)}\n`);
    await assert.rejects(() => empty.index.rangeOf(empty.fd, { mode: "last" }));
    await empty.close();
  });

  it("serves a complete last entry without its newline, and asks for a newline before the next append", async () => {
    const { fd, index, close } = await indexed(`${line(1)}\n${line(2)}`);
    assert.equal(index.openTail, true);
    assert.equal(index.needsSeparator, true);
    assert.equal(index.size, Buffer.byteLength(`${line(1)}\n${line(2)}`));
    assert.equal(await index.nextId(fd), 3);
    await close();
  });

  it("never serves a fragment, and skips it as a torn line once an append closes it", async () => {
    const logs = captureLogs();
    try {
      const { fd, index, close } = await indexed(`${line(1)}\n{"id":2,"ki`);
      assert.equal(index.openTail, false);
      assert.equal(index.needsSeparator, true);
      assert.equal(index.size, Buffer.byteLength(`${line(1)}\n`));
      const fragmentAt = index.size;
      const appended = JSON.parse(line(2)) as never;
      index.recordAppend(1, [{ entry: appended, lineBytes: Buffer.byteLength(line(2)) + 1 }]);
      assert.equal(index.needsSeparator, false);
      assert.equal(await index.nextId(fd), 3);
      assert.deepEqual(await index.skippedLines(fd), [{ offset: fragmentAt, reason: "torn line: an earlier write was interrupted" }]);
      await close();
    } finally {
      logs.restore();
    }
  });

  it("catches up with lines another writer appended, and starts over when the file shrank", async () => {
    const { path, fd, index, refresh, close } = await indexed(`${line(1)}\n`);
    appendFileSync(path, `${anchor(2, "new")}\n${line(3)}\n`);
    await refresh();
    assert.equal(await index.nextId(fd), 4);
    assert.equal((await index.rangeOf(fd, { mode: "after", name: "new" })).end, index.size);
    writeFileSync(path, `${line(1)}\n`);
    await refresh();
    assert.equal(await index.nextId(fd), 2);
    await assert.rejects(() => index.rangeOf(fd, { mode: "after", name: "new" }));
    index.clear();
    assert.equal(index.size, 0);
    await close();
  });
});
