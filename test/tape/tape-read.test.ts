import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import type { TapeQuery } from "../../src/kernel/tape-contract.ts";
import { TapeIndex } from "../../src/tape/tape-index.ts";
import { readTape } from "../../src/tape/tape-read.ts";
import type { ByteSource } from "../../src/tape/jsonl-lines.ts";
import { captureLogs, tempDir } from "./support/helpers.ts";

const DATE = "2026-01-02T03:04:05.000000+00:00";
const line = (id: number, kind = "message", payload: Record<string, unknown> = { role: "user", content: `m${id}` }) => JSON.stringify({ id, kind, payload, meta: {}, date: DATE });
const anchor = (id: number, name: string) => line(id, "anchor", { name });

/** Reads `query` from a tape file holding `text`; the ids found, in order. */
async function idsOf(text: string, query: Omit<TapeQuery, "tape">, index?: TapeIndex): Promise<number[]> {
  const path = join(tempDir("read"), "t.jsonl");
  writeFileSync(path, text);
  const fd = await open(path, "r");
  try {
    const used = index ?? new TapeIndex(path);
    await used.update(fd, (await fd.stat()).size);
    return (await readTape(fd, used, { tape: "t", ...query })).map((entry) => entry.id);
  } finally {
    await fd.close();
  }
}

/** The positioned reads of `fd`, counting the bytes they read. */
function countingReads(fd: FileHandle): ByteSource & { bytesRead: number } {
  const counted = {
    bytesRead: 0,
    read: async (buffer: Buffer, offset: number, length: number, position: number) => {
      const result = await fd.read(buffer, offset, length, position);
      counted.bytesRead += result.bytesRead;
      return result;
    },
  };
  return counted;
}

describe("readTape", () => {
  const text = `${line(1)}\n${anchor(2, "a")}\n${line(3)}\n${anchor(4, "b")}\n${line(5)}\n${line(6)}`;

  it("reads the anchor slice of a query, oldest first", async () => {
    assert.deepEqual(await idsOf(text, {}), [1, 2, 3, 4, 5, 6]);
    assert.deepEqual(await idsOf(text, { afterAnchor: "a" }), [3, 4, 5, 6]);
    assert.deepEqual(await idsOf(text, { lastAnchor: true }), [5, 6]);
    assert.deepEqual(await idsOf(text, { betweenAnchors: { start: "a", end: "b" } }), [3]);
  });

  it("reads a text search newest first, through an entry that has no newline yet, and stops at the limit", async () => {
    assert.deepEqual(await idsOf(text, { text: "2026", limit: 3 }), [6, 5, 4]);
    assert.deepEqual(await idsOf(text, { text: "2026", limit: 1 }), [6]);
    assert.deepEqual(await idsOf(text, { text: "2026", afterAnchor: "b" }), [6, 5]);
    assert.deepEqual(await idsOf(text, { text: "m3" }), [3]);
  });

  it("reads an afterId query back from the end only as far as that id, decoding only lines of its kinds", async () => {
    const many = Array.from({ length: 20_000 }, (_, index) => (index % 10 === 9 ? line(index + 1, "event", { name: `e${index + 1}` }) : line(index + 1))).join("\n") + "\n";
    const path = join(tempDir("read"), "t.jsonl");
    writeFileSync(path, many);
    const fd = await open(path, "r");
    try {
      const counted = countingReads(fd);
      const index = new TapeIndex(path);
      await index.update(fd, (await fd.stat()).size);
      const found = await readTape(counted, index, { tape: "t", kinds: ["event"], afterId: 19_975 });
      assert.deepEqual(found.map((entry) => entry.id), [19_980, 19_990, 20_000]);
      assert.ok(counted.bytesRead < many.length / 10, `read ${counted.bytesRead} of ${many.length} bytes`);
      assert.deepEqual((await readTape(fd, index, { tape: "t", afterId: 19_998 })).map((entry) => entry.id), [19_999, 20_000]);
      assert.deepEqual((await readTape(fd, index, { tape: "t", kinds: ["event"], afterId: 0, limit: 2 })).map((entry) => entry.id), [10, 20]);
    } finally {
      await fd.close();
    }
  });

  it("reads what came since a remembered id in a few kilobytes, however long the tape, and grows its reads for a long last line", async () => {
    const long = "x".repeat(10_000);
    const lines = Array.from({ length: 2_000 }, (_, index) => line(index + 1));
    const path = join(tempDir("read"), "t.jsonl");
    writeFileSync(path, `${lines.join("\n")}\n${line(2_001, "message", { role: "assistant", content: long })}\n${line(2_002)}\n`);
    const fd = await open(path, "r");
    try {
      const counted = countingReads(fd);
      const index = new TapeIndex(path);
      await index.update(counted, (await fd.stat()).size);
      counted.bytesRead = 0;
      assert.deepEqual((await readTape(counted, index, { tape: "t", afterId: 2_001 })).map((entry) => entry.id), [2_002]);
      assert.ok(counted.bytesRead <= 4096, `read ${counted.bytesRead} bytes for the last entry`);
      const found = await readTape(counted, index, { tape: "t", afterId: 1_999 });
      assert.deepEqual(found.map((entry) => entry.id), [2_000, 2_001, 2_002]);
      assert.equal(found[1]?.payload.content, long);
    } finally {
      await fd.close();
    }
  });

  it("still checks the anchors of a query with limit 0", async () => {
    assert.deepEqual(await idsOf(text, { limit: 0 }), []);
    await assert.rejects(() => idsOf(text, { limit: 0, afterAnchor: "missing" }), /missing/);
  });

  it("skips a malformed line it reads, recording it in the index", async () => {
    const logs = captureLogs();
    try {
      const path = join(tempDir("read"), "t.jsonl");
      const index = new TapeIndex(path);
      assert.deepEqual(await idsOf(`${line(1)}\n{oops\n\n${line(2)}\n`, {}, index), [1, 2]);
      assert.deepEqual(
        logs.records.map((record) => record.level),
        ["warn"],
      );
    } finally {
      logs.restore();
    }
  });
});

describe("queries by kind", () => {
  it("return exactly the entries of those kinds, also when other entries mention the kind's name", async () => {
    const text = [
      anchor(1, "session/start"),
      line(2, "message", { role: "user", content: 'the word "event" in a message' }),
      line(3, "event", { name: "loop.start" }),
      line(4, "tool_result", { results: ['{"kind":"event"}'] }),
      `{"id": 5, "kind": "event", "payload": {"name": "written by the reference"}, "meta": {}, "date": "${DATE}"}`,
      line(6, "message"),
    ].join("\n") + "\n";
    assert.deepEqual(await idsOf(text, { kinds: ["event"] }), [3, 5]);
    assert.deepEqual(await idsOf(text, { kinds: ["event", "tool_result"] }), [3, 4, 5]);
    assert.deepEqual(await idsOf(text, { kinds: ["event"], lastAnchor: true }), [3, 5]);
  });
});
