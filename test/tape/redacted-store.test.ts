// Reading a tape with today's secrets: entries written before a key was a secret come out
// with the marker, a text search cannot find the secret, writes and stats pass through.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMemoryTapeStore } from "../../src/tape/memory-store.ts";
import { entries } from "../../src/tape/entry.ts";
import { redactEntry, redactedTapeStore } from "../../src/tape/redacted-store.ts";
import { redactSecrets } from "../../src/config/redaction.ts";

const KEY = "sk-old-tape-0123456789";
const redact = (text: string) => redactSecrets(text, [{ name: "api_key", value: KEY }]);
const TAPE = "aaaa000000000000__bbbb000000000000";

describe("redactedTapeStore", () => {
  it("redacts every string of payload and meta, nested and in keys; ids, kinds and dates stay", async () => {
    const store = createMemoryTapeStore();
    await store.append(TAPE, entries.message({ role: "user", content: [{ type: "text", text: `key ${KEY}` }] }, { note: KEY }));
    await store.append(TAPE, entries.toolResult([{ [KEY]: [`${KEY}!`] }]));
    const view = redactedTapeStore(store, redact);
    const [message, result] = await view.fetchAll({ tape: TAPE });
    assert.deepEqual(message!.payload.content, [{ type: "text", text: "key [redacted:api_key]" }]);
    assert.equal(message!.meta.note, "[redacted:api_key]");
    assert.deepEqual(result!.payload.results, [{ "[redacted:api_key]": ["[redacted:api_key]!"] }]);
    const stored = await store.fetchAll({ tape: TAPE });
    assert.deepEqual([message!.id, message!.kind, message!.date], [stored[0]!.id, stored[0]!.kind, stored[0]!.date]);
    assert.ok(JSON.stringify(stored).includes(KEY), "the store itself is unchanged");
  });

  it("finds by text only what the redacted entries still contain, the limit applied after", async () => {
    const store = createMemoryTapeStore();
    await store.append(TAPE, entries.message({ role: "user", content: `first ${KEY}` }));
    await store.append(TAPE, entries.message({ role: "user", content: "second sk-old mention" }));
    await store.append(TAPE, entries.message({ role: "user", content: "third sk-old mention" }));
    const view = redactedTapeStore(store, redact);
    assert.deepEqual(await view.fetchAll({ tape: TAPE, text: "tape-0123" }), []);
    const found = await view.fetchAll({ tape: TAPE, text: "sk-old", limit: 2 });
    assert.deepEqual(found.map((entry) => entry.payload.content), ["third sk-old mention", "second sk-old mention"]);
  });

  it("passes writes, the tape list and the name index (its session ids redacted) through", async () => {
    const store = createMemoryTapeStore();
    const view = redactedTapeStore(store, redact);
    await view.append(TAPE, entries.event("note", { text: "hi" }));
    await view.recordTapeName?.({ tape: TAPE, sessionId: `cli:${KEY}`, workspace: "/work" });
    assert.deepEqual(await view.listTapes(), await store.listTapes());
    assert.deepEqual(await view.tapeNames?.(), [{ tape: TAPE, sessionId: "cli:[redacted:api_key]", workspace: "/work" }]);
    assert.equal(view.tapeStats, store.tapeStats && view.tapeStats, "an optional method is kept only when the store has it");
  });

  it("redactEntry leaves an entry without secrets equal to itself", () => {
    const entry = { id: 3, kind: "event", payload: { name: "x", data: { n: 1, ok: true, none: null } }, meta: {}, date: "2026-01-01T00:00:00.000000+00:00" };
    assert.deepEqual(redactEntry(entry, redact), entry);
  });
});
