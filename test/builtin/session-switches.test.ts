// The model and reasoning-effort switches a session's tape records, read by the builtin
// loadState: the first turn reads the tape's events, later turns only what was appended since.
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { sessionSwitches, type SwitchMemo } from "../../src/builtin/agent-plugin.ts";
import type { TapeQuery, TapeStore } from "../../src/kernel/tape-contract.ts";
import { entries } from "../../src/tape/entry.ts";
import { createFileTapeStore } from "../../src/tape/file-store.ts";
import { createTape } from "../../src/tape/tape.ts";
import { tempDir } from "../tape/support/helpers.ts";

const NAME = "ws__session";

/** `store` with every query it answers recorded. */
function watched(store: TapeStore): { store: TapeStore; queries: TapeQuery[] } {
  const queries: TapeQuery[] = [];
  return { store: { ...store, fetchAll: (query) => (queries.push(query), store.fetchAll(query)) }, queries };
}

describe("sessionSwitches", () => {
  it("reads the switches once, then only the events appended since, another writer's included", async () => {
    const directory = join(tempDir("switches"), "tapes");
    const mine = watched(createFileTapeStore({ directory }));
    const other = createFileTapeStore({ directory });
    const tape = createTape({ name: NAME, store: mine.store, archivePath: tempDir("archive") });
    const memos = new Map<string, SwitchMemo>();
    await tape.ensureBootstrapAnchor();
    await tape.appendEvent("model_switch", { model: "first" });
    await tape.appendEvent("reasoning_effort_switch", { reasoning_effort: "low" });
    await tape.appendEvent("model_switch", { model: "" });
    assert.deepEqual(await sessionSwitches(tape, memos), { model: "first", reasoning_effort: "low" });
    assert.equal(mine.queries.at(-1)?.afterId, undefined, "the first read is of every event");

    await other.append(NAME, entries.event("model_switch", { model: "second" }));
    await other.append(NAME, entries.message({ role: "user", content: "hello" }));
    assert.deepEqual(await sessionSwitches(tape, memos), { model: "second", reasoning_effort: "low" });
    assert.equal(mine.queries.at(-1)?.afterId, 4, "from the last event seen (id 5) on");
    assert.deepEqual(await sessionSwitches(tape, memos), { model: "second", reasoning_effort: "low" });
    assert.equal(mine.queries.at(-1)?.afterId, 5);
    await mine.store.close?.();
    await other.close();
  });

  it("notices a reset of the tape, by this store or another, and reads it again from the start", async () => {
    const directory = join(tempDir("switches"), "tapes");
    const store = createFileTapeStore({ directory });
    const other = createFileTapeStore({ directory });
    const tape = createTape({ name: NAME, store, archivePath: tempDir("archive") });
    const memos = new Map<string, SwitchMemo>();
    await tape.ensureBootstrapAnchor();
    await tape.appendEvent("model_switch", { model: "before" });
    assert.deepEqual(await sessionSwitches(tape, memos), { model: "before" });
    await tape.reset();
    assert.deepEqual(await sessionSwitches(tape, memos), {});
    await tape.appendEvent("model_switch", { model: "again" });
    assert.deepEqual(await sessionSwitches(tape, memos), { model: "again" });
    // Another process resets it and writes as many events: the same ids, other dates.
    await other.reset(NAME);
    await other.appendBatch(NAME, [entries.anchor("session/start"), entries.event("handoff", { name: "session/start" }), entries.event("other", { n: 1 })]);
    assert.deepEqual(await sessionSwitches(tape, memos), {});
    await store.close();
    await other.close();
  });
});
