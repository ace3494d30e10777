// Forks: private writes, combined reads with the anchor rules, merge-back, discard, reset, media.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { NewTapeEntry, TapeEntry, TapeStore } from "../../src/kernel/tape-contract.ts";
import type { EncodedAppendStore } from "../../src/tape/append-many.ts";
import { entries, type EncodedEntry } from "../../src/tape/entry.ts";
import { createFileTapeStore } from "../../src/tape/file-store.ts";
import { forkTape } from "../../src/tape/fork.ts";
import { createMemoryTapeStore } from "../../src/tape/memory-store.ts";
import { createTape } from "../../src/tape/tape.ts";
import { bubError, captureLogs, storeFactories, tempDir } from "./support/helpers.ts";

const MAIN = "ws__session";
const SPILL = `${MAIN}__sidecar__spill`;
const names = (found: TapeEntry[]) => found.map((entry) => String(entry.payload.name ?? entry.payload.content));

/** A store that records the order of appends and resets reaching it. */
function recording(store = createMemoryTapeStore()) {
  const calls: string[] = [];
  const wrapped: TapeStore = {
    listTapes: () => store.listTapes(),
    fetchAll: (query) => store.fetchAll(query),
    append: async (tape, entry) => (calls.push(`append ${tape}`), store.append(tape, entry)),
    appendBatch: async (tape, batch) => (calls.push(`batch ${tape} x${batch.length}`), store.appendBatch!(tape, batch)),
    reset: async (tape) => (calls.push(`reset ${tape}`), store.reset(tape)),
  };
  return { store: wrapped, inner: store, calls };
}

function sessionTape(store: TapeStore) {
  return createTape({ name: MAIN, store, archivePath: "/unused", sidecars: [{ name: "spill" }] });
}

describe("tape forks", () => {
  it("keeps writes private until merged, then appends them with fresh ids and the same dates", async () => {
    const { store, inner, calls } = recording();
    await inner.appendBatch(MAIN, [entries.anchor("session/start"), entries.event("persisted")]);
    const tape = sessionTape(store);
    const fork = forkTape(tape);
    const local = await fork.tape.appendEvent("turn", { n: 1 });
    await fork.store.appendBatch!(SPILL, [entries.anchor("spill/h/chunk/0"), entries.toolResult(["chunk"])]);
    assert.equal((await inner.fetchAll({ tape: MAIN })).length, 2);
    assert.deepEqual(await inner.fetchAll({ tape: SPILL }), []);
    assert.deepEqual(names(await fork.tape.search({ tape: MAIN })), ["session/start", "persisted", "turn"]);
    assert.equal(await fork.merge(), 3);
    assert.deepEqual(calls, [`batch ${SPILL} x2`, `batch ${MAIN} x1`], "sidecars first, one batch per tape");
    const merged = (await inner.fetchAll({ tape: MAIN })).at(-1)!;
    assert.deepEqual({ ...merged, id: 0 }, { ...local, id: 0 });
    assert.equal(merged.id, 3);
    assert.equal(fork.state, "merged");
    assert.equal(await fork.merge(), 0, "a second merge does nothing");
    await fork.tape.appendEvent("late", {});
    assert.equal((await inner.fetchAll({ tape: MAIN })).at(-1)!.payload.name, "late", "after a merge, writes pass through");
  });

  it("discards its writes, and refuses writes afterwards", async () => {
    const inner = createMemoryTapeStore();
    const fork = forkTape(sessionTape(inner), { mergeBack: false });
    await fork.tape.appendEvent("temp", {});
    await fork[Symbol.asyncDispose]();
    assert.equal(fork.state, "discarded");
    assert.deepEqual(await inner.fetchAll({ tape: MAIN }), []);
    await assert.rejects(fork.tape.appendEvent("again", {}), bubError("invalid_input", /was discarded/));
    await assert.rejects(fork.merge(), bubError("invalid_input", /discarded and cannot be merged/));
  });

  it("merges when disposed with await using", async () => {
    const inner = createMemoryTapeStore();
    {
      await using fork = forkTape(sessionTape(inner));
      await fork.tape.ensureBootstrapAnchor();
      assert.deepEqual(await inner.fetchAll({ tape: MAIN }), []);
    }
    assert.deepEqual(names(await inner.fetchAll({ tape: MAIN })), ["session/start", "handoff"]);
  });

  it("applies local anchors to last-anchor and named-anchor reads", async () => {
    const inner = createMemoryTapeStore();
    await inner.appendBatch(MAIN, [entries.anchor("a"), entries.event("p1"), entries.anchor("b"), entries.event("p2")]);
    const fork = forkTape(sessionTape(inner));
    await fork.tape.appendEvent("l1", {});
    assert.deepEqual(names(await fork.tape.search({ tape: MAIN, lastAnchor: true })), ["p2", "l1"]);
    assert.deepEqual(names(await fork.tape.search({ tape: MAIN, afterAnchor: "a" })), ["p1", "b", "p2", "l1"]);
    await fork.tape.append(entries.anchor("a"));
    await fork.tape.appendEvent("l2", {});
    assert.deepEqual(names(await fork.tape.search({ tape: MAIN, lastAnchor: true })), ["l2"]);
    assert.deepEqual(names(await fork.tape.search({ tape: MAIN, afterAnchor: "a" })), ["l2"]);
    assert.deepEqual(names(await fork.tape.search({ tape: MAIN, afterAnchor: "b" })), ["p2", "l1", "a", "l2"]);
    await assert.rejects(fork.tape.search({ tape: MAIN, afterAnchor: "zzz" }), bubError("not_found", "Anchor 'zzz' was not found."));
  });

  it("reads between anchors across the parent and the fork", async () => {
    const inner = createMemoryTapeStore();
    await inner.appendBatch(MAIN, [entries.anchor("start"), entries.event("p1")]);
    const fork = forkTape(sessionTape(inner));
    const local = await fork.tape.appendBatch([entries.event("l1"), entries.anchor("end"), entries.event("l2")]);
    assert.deepEqual(local.map((entry) => entry.id), [1, 2, 3], "the fork numbers its own entries until they are merged");
    assert.deepEqual(names(await fork.tape.search({ tape: MAIN, betweenAnchors: { start: "start", end: "end" } })), ["p1", "l1"]);
    await assert.rejects(fork.tape.search({ tape: MAIN, betweenAnchors: { start: "end", end: "start" } }), bubError("not_found", "Anchor 'start' was not found."));
    await assert.rejects(fork.tape.search({ tape: MAIN, betweenAnchors: { start: "nope", end: "end" } }), bubError("not_found", "Anchor 'nope' was not found."));
    await fork.tape.appendBatch([entries.anchor("start"), entries.event("l3"), entries.anchor("end")]);
    assert.deepEqual(names(await fork.tape.search({ tape: MAIN, betweenAnchors: { start: "start", end: "end" } })), ["l3"]);
  });

  it("filters its own entries by text, dates and kinds too, and applies the limit to the whole", async () => {
    const inner = createMemoryTapeStore();
    await inner.appendBatch(MAIN, [entries.message({ role: "user", content: "apple pie" }), entries.message({ role: "user", content: "banana" })]);
    const fork = forkTape(sessionTape(inner));
    await fork.tape.appendBatch([entries.message({ role: "user", content: "Apple juice" }), entries.event("apple-event"), entries.message({ role: "user", content: "cherry" })]);
    assert.deepEqual(names(await fork.tape.search({ tape: MAIN, text: "apple" })), ["apple-event", "Apple juice", "apple pie"]);
    assert.deepEqual(names(await fork.tape.search({ tape: MAIN, text: "apple", kinds: ["message"], limit: 1 })), ["Apple juice"]);
    assert.deepEqual(names(await fork.tape.search({ tape: MAIN, kinds: ["message"], limit: 3 })), ["apple pie", "banana", "Apple juice"]);
    assert.deepEqual(await fork.tape.search({ tape: MAIN, betweenDates: { end: "2000-01-01" } }), []);
    await assert.rejects(fork.tape.search({ tape: MAIN, betweenDates: { start: "soon" } }), bubError("invalid_input", "Invalid ISO date or datetime: 'soon'."));
  });

  it("resets inside the fork: the parent is untouched until merge, then replaced", async () => {
    const { store, inner, calls } = recording();
    await inner.appendBatch(MAIN, [entries.event("before")]);
    await inner.appendBatch(SPILL, [entries.event("old chunk")]);
    const tape = sessionTape(store);
    const fork = forkTape(tape);
    await fork.tape.reset();
    assert.deepEqual(names(await fork.tape.search({ tape: MAIN })), ["session/start", "handoff", "sidecar.reset"]);
    assert.deepEqual(await fork.store.fetchAll({ tape: SPILL }), []);
    assert.deepEqual(names(await inner.fetchAll({ tape: MAIN })), ["before"]);
    await fork.merge();
    assert.deepEqual(calls, [`reset ${SPILL}`, `reset ${MAIN}`, `batch ${MAIN} x3`]);
    assert.deepEqual((await inner.fetchAll({ tape: MAIN })).map((entry) => [entry.id, entry.payload.name]), [
      [1, "session/start"],
      [2, "handoff"],
      [3, "sidecar.reset"],
    ]);
    assert.deepEqual(await inner.fetchAll({ tape: SPILL }), []);
  });

  it("passes other tapes straight through", async () => {
    const inner = createMemoryTapeStore();
    const fork = forkTape(sessionTape(inner));
    await fork.store.append("other__tape", entries.event("direct"));
    assert.equal((await inner.fetchAll({ tape: "other__tape" })).length, 1);
    await fork.store.reset("other__tape");
    assert.deepEqual(await inner.fetchAll({ tape: "other__tape" }), []);
    assert.deepEqual(await fork.store.listTapes(), await inner.listTapes());
  });

  it("does not persist media parts of content or prompt lists", async () => {
    const inner = createMemoryTapeStore();
    const fork = forkTape(sessionTape(inner));
    const content = [
      { type: "text", text: "look" },
      { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
      { type: "input_audio", input_audio: { data: "BBBB", format: "wav" } },
    ];
    const stored = await fork.tape.append(entries.message({ role: "user", content }));
    await fork.tape.append({ kind: "event", payload: { name: "x", prompt: [...content] }, meta: {}, date: "2026-01-01T00:00:00+00:00" });
    await fork.tape.append({ kind: "event", payload: { name: "y", content: "plain", prompt: [...content] }, meta: {}, date: "2026-01-01T00:00:00+00:00" });
    await fork.store.append("other__tape", entries.message({ role: "user", content }));
    assert.deepEqual(stored.payload.content, [{ type: "text", text: "look" }]);
    assert.equal(content.length, 3, "the caller's message is not changed");
    await fork.merge();
    const found = await inner.fetchAll({ tape: MAIN });
    assert.deepEqual(found.map((entry) => entry.payload.content ?? entry.payload.prompt), [[{ type: "text", text: "look" }], [{ type: "text", text: "look" }], "plain"]);
    assert.equal((found[2]!.payload.prompt as unknown[]).length, 3, "prompt is kept when there is a content key");
    assert.deepEqual((await inner.fetchAll({ tape: "other__tape" }))[0]!.payload.content, [{ type: "text", text: "look" }]);
  });

  it("records a sidecar that fails to merge and still merges the main tape", async () => {
    const inner = createMemoryTapeStore();
    const failing: EncodedAppendStore = {
      ...inner,
      appendBatch: async (tape: string, batch: readonly NewTapeEntry[]) => {
        if (tape === SPILL) throw new Error("sidecar disk full");
        return inner.appendBatch(tape, batch);
      },
      // The merge's path into bub's own stores (entries encoded in the fork).
      appendEncoded: async (tape: string, encoded: readonly EncodedEntry[]) => {
        if (tape === SPILL) throw new Error("sidecar disk full");
        return inner.appendEncoded(tape, encoded);
      },
    };
    const logs = captureLogs();
    try {
      const fork = forkTape(sessionTape(failing));
      await fork.store.append(SPILL, entries.event("chunk"));
      await fork.tape.appendEvent("main", {});
      await fork.merge();
      const found = await inner.fetchAll({ tape: MAIN });
      assert.deepEqual(found.map((entry) => [entry.payload.name, entry.payload.data ?? null, entry.meta]), [
        ["main", {}, {}],
        ["sidecar.merge", { tape: SPILL, status: "error", error: "sidecar disk full" }, { context: false }],
      ]);
      assert.ok(logs.records.some((record) => record.level === "warn" && record.message === `Failed to merge sidecar "${SPILL}" into tape "${MAIN}": sidecar disk full`));
      assert.ok(logs.records.some((record) => record.message === `Merged 2 entries into tape fork "${MAIN}"`));
    } finally {
      logs.restore();
    }
  });

  it("keeps its entries for a retry when the main tape cannot be written", async () => {
    const inner = createMemoryTapeStore();
    let broken = true;
    const flaky: EncodedAppendStore = {
      ...inner,
      appendBatch: async (tape: string, batch: readonly NewTapeEntry[]) => {
        if (broken) throw new Error("temporarily unavailable");
        return inner.appendBatch(tape, batch);
      },
      appendEncoded: async (tape: string, encoded: readonly EncodedEntry[]) => {
        if (broken) throw new Error("temporarily unavailable");
        return inner.appendEncoded(tape, encoded);
      },
    };
    const fork = forkTape(sessionTape(flaky));
    await fork.tape.appendEvent("precious", {});
    await assert.rejects(fork.merge(), /temporarily unavailable/);
    assert.equal(fork.state, "open");
    broken = false;
    assert.equal(await fork.merge(), 1);
    assert.deepEqual(names(await inner.fetchAll({ tape: MAIN })), ["precious"]);
  });

  it("gives increasing ids on a file store across successive forks", async () => {
    const store = createFileTapeStore({ directory: tempDir("fork-file") });
    for (const n of [1, 2]) {
      const fork = forkTape(sessionTape(store));
      await fork.tape.appendEvent(`turn-${n}`, { n });
      await fork.merge();
    }
    assert.deepEqual((await store.fetchAll({ tape: MAIN })).map((entry) => [entry.id, entry.payload.name]), [
      [1, "turn-1"],
      [2, "turn-2"],
    ]);
  });
});

for (const [storeName, makeStore] of storeFactories) {
  describe(`one session/start per session: ${storeName} store`, () => {
    it("concurrent first turns on a fresh tape write exactly one session/start anchor and keep every turn", async () => {
      const store = makeStore();
      const turns = 6;
      const forks = Array.from({ length: turns }, () => forkTape(sessionTape(store)));
      // Every fork checks before any merges: each one saw a tape without an anchor.
      await Promise.all(forks.map((fork) => fork.tape.ensureBootstrapAnchor()));
      await Promise.all(forks.map(async (fork, n) => {
        await fork.tape.appendEvent(`turn-${n}`);
        await fork.merge();
      }));
      const all = await store.fetchAll({ tape: MAIN });
      assert.deepEqual(all.filter((entry) => entry.kind === "anchor").map((entry) => entry.payload.name), ["session/start"]);
      assert.equal(all.filter((entry) => entry.payload.name === "handoff").length, 1);
      assert.deepEqual(all.slice(0, 2).map((entry) => entry.payload.name), ["session/start", "handoff"]);
      assert.deepEqual(all.slice(2).map((entry) => String(entry.payload.name)).sort(), Array.from({ length: turns }, (_, n) => `turn-${n}`).sort());
      assert.deepEqual(all.map((entry) => entry.id), Array.from({ length: all.length }, (_, index) => index + 1));
      await store.close?.();
    });

    it("concurrent ensureBootstrapAnchor calls on the store itself write one anchor", async () => {
      const store = makeStore();
      await Promise.all(Array.from({ length: 8 }, () => sessionTape(store).ensureBootstrapAnchor()));
      assert.deepEqual(names(await store.fetchAll({ tape: MAIN })), ["session/start", "handoff"]);
      await store.close?.();
    });
  });
}

describe("a fork's session/start", () => {
  it("is kept when the fork is the first to merge, and when the fork reset the tape", async () => {
    const store = createMemoryTapeStore();
    const first = forkTape(sessionTape(store));
    const second = forkTape(sessionTape(store));
    await first.tape.ensureBootstrapAnchor();
    await second.tape.ensureBootstrapAnchor();
    await second.tape.reset();
    await first.merge();
    await second.merge();
    // The reset emptied the tape and started it again: its own session/start stays.
    assert.deepEqual(names(await store.fetchAll({ tape: MAIN })), ["session/start", "handoff", "sidecar.reset"]);
  });
});
