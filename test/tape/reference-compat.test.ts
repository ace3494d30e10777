// A tape written by the reference (Python) runtime reads here unchanged, and builds the same context.
import assert from "node:assert/strict";
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { createDefaultTapeContext, selectMessages } from "../../src/tape/context.ts";
import { entries } from "../../src/tape/entry.ts";
import { createFileTapeStore } from "../../src/tape/file-store.ts";
import { createTape } from "../../src/tape/tape.ts";
import { captureLogs, tempDir } from "./support/helpers.ts";

const FIXTURE = fileURLToPath(new URL("../fixtures/tape/reference-session.jsonl", import.meta.url));
const TAPE = "5d41402abc4b2a76__b9d1c2a1f0e0d3c4";
const PROMPT = "channel=$cli|chat_id=local\n---Date: 2026-03-01T10:00:00+01:00---\nWie spät ist es in Tokyo?";

function openFixture() {
  const directory = tempDir("reference");
  copyFileSync(FIXTURE, join(directory, `${TAPE}.jsonl`));
  const store = createFileTapeStore({ directory });
  return { directory, store, tape: createTape({ name: TAPE, store, archivePath: directory }) };
}

describe("a reference-runtime tape", () => {
  it("reads every complete entry, derives the legacy date and never serves the torn line", async () => {
    const { store } = openFixture();
    const found = await store.fetchAll({ tape: TAPE });
    assert.deepEqual(found.map((entry) => entry.id), Array.from({ length: 17 }, (_, index) => index + 1));
    assert.equal(found[2]!.date, "2026-03-01T09:00:01+00:00");
    assert.deepEqual(found.at(-1), { id: 17, kind: "message", payload: { role: "user", content: "und in Berlin?" }, meta: {}, date: "2026-03-01T09:20:00.250000+00:00" });
    assert.deepEqual(await store.listTapes(), [TAPE]);
  });

  it("builds the reference context after the last anchor and over the whole tape", async () => {
    const { tape } = openFixture();
    assert.deepEqual(await tape.readMessages(), [{ role: "user", content: "und in Berlin?" }]);
    const whole = tape.withContext({ anchor: null, select: selectMessages, state: {} });
    assert.deepEqual(await whole.readMessages(), [
      { role: "assistant", content: '[Anchor created: session/start]: {"owner": "human"}' },
      { role: "user", content: PROMPT },
      { role: "assistant", content: "", tool_calls: [{ id: "call_abc", type: "function", function: { name: "bash", arguments: '{"cmd": "TZ=Asia/Tokyo date"}' } }] },
      { role: "tool", content: "Sun Mar  1 18:00:01 JST 2026", tool_call_id: "call_abc", name: "bash" },
      { role: "user", content: "Continue the task until all targets are completed." },
      { role: "assistant", content: "In Tokyo ist es 18:00 Uhr. 🗼" },
      { role: "assistant", content: '[Anchor created: handoff/tokyo]: {"summary": "Zeit in Tokyo beantwortet"}' },
      { role: "user", content: "und in Berlin?" },
    ]);
    const fromFirst = tape.withContext({ ...createDefaultTapeContext(), anchor: "session/start" });
    assert.equal((await fromFirst.readMessages()).length, 7);
  });

  it("reports the reference's tape info, anchors and searches", async () => {
    const { tape } = openFixture();
    assert.deepEqual(await tape.info(), {
      name: TAPE,
      entries: 17,
      anchors: 2,
      lastAnchor: "handoff/tokyo",
      entriesSinceLastAnchor: 3,
      lastTokenUsage: 1300,
      lastTokenCacheHitRate: 0.75,
    });
    assert.deepEqual((await tape.anchors()).map((anchor) => anchor.name), ["session/start", "handoff/tokyo"]);
    assert.deepEqual((await tape.search(tape.query().text("TOKYO").kinds("message"))).map((entry) => entry.id), [12, 6]);
    assert.deepEqual((await tape.search(tape.query().betweenDates("2026-03-01T09:05:00+00:00"))).map((entry) => entry.id), [14, 15, 16, 17]);
  });

  it("appends after the torn line without rewriting anything, in the reference's line format", async () => {
    const { directory, store, tape } = openFixture();
    const logs = captureLogs();
    try {
      const before = readFileSync(join(directory, `${TAPE}.jsonl`));
      const stored = await tape.append(entries.message({ role: "assistant", content: "In Berlin ist es 10:00 Uhr." }));
      assert.equal(stored.id, 18);
      const after = readFileSync(join(directory, `${TAPE}.jsonl`));
      assert.deepEqual(after.subarray(0, before.length), before);
      const lastLine = after.toString("utf8").trimEnd().split("\n").at(-1)!;
      const parsed = JSON.parse(lastLine);
      assert.deepEqual(Object.keys(parsed), ["id", "kind", "payload", "meta", "date"]);
      assert.match(parsed.date, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$/);
      assert.deepEqual((await store.skippedLines(TAPE)).map((line) => line.reason), ["torn line: an earlier write was interrupted"]);
      assert.deepEqual((await tape.readMessages()).at(-1), { role: "assistant", content: "In Berlin ist es 10:00 Uhr." });
    } finally {
      logs.restore();
    }
  });
});
