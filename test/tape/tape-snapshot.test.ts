// A turn's snapshot of its session tape: one read of the store answers the turn's reads;
// another writer's appends and resets are seen; "no anchor" is always the store's answer.
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { TapeQuery, TapeStore } from "../../src/kernel/tape-contract.ts";
import { entries } from "../../src/tape/entry.ts";
import { createFileTapeStore } from "../../src/tape/file-store.ts";
import { createMemoryTapeStore } from "../../src/tape/memory-store.ts";
import { createTapeSnapshot, storeBelow, TapeTails } from "../../src/tape/tape-snapshot.ts";
import { createTapes } from "../../src/tape/tapes.ts";
import { tempDir } from "./support/helpers.ts";

const NAME = "ws__session";

/** `store` with every query it answers recorded. */
function watched(store: TapeStore): { store: TapeStore; queries: TapeQuery[] } {
  const queries: TapeQuery[] = [];
  return { store: { ...store, fetchAll: (query) => (queries.push(query), store.fetchAll(query)) }, queries };
}

const contents = (found: readonly { payload: Record<string, unknown> }[]) => found.map((entry) => entry.payload.content ?? entry.payload.name);

describe("createTapeSnapshot", () => {
  it("answers the turn's reads from one read of the store, then from the last anchor on (entries not remembered)", async () => {
    const parent = createMemoryTapeStore();
    await parent.appendBatch(NAME, [entries.anchor("session/start"), entries.event("model_switch", { model: "a" }), entries.system("sys"), entries.anchor("later"), entries.message({ role: "user", content: "hi" })]);
    const { store, queries } = watched(parent);
    const tails = new TapeTails(0);
    const first = createTapeSnapshot(store, NAME, tails).store;
    assert.deepEqual(contents(await first.fetchAll({ tape: NAME, kinds: ["event"] })), ["model_switch"]);
    assert.deepEqual(contents(await first.fetchAll({ tape: NAME, kinds: ["system"] })), ["sys"]);
    assert.deepEqual(contents(await first.fetchAll({ tape: NAME, lastAnchor: true })), ["hi"]);
    assert.deepEqual(await first.fetchAll({ tape: NAME, lastAnchor: true, limit: 0 }), []);
    assert.deepEqual(queries, [{ tape: NAME }], "the anchor is not known yet: one read of the whole tape");
    // What the turn writes through it is added to what it holds, without reading again.
    await first.appendBatch?.(NAME, [entries.message({ role: "assistant", content: "hello" })]);
    assert.deepEqual(contents(await first.fetchAll({ tape: NAME, lastAnchor: true })), ["hi", "hello"]);
    assert.equal(queries.length, 1);

    // The next turn reads from the last anchor (id 4) on, and only that.
    const second = createTapeSnapshot(store, NAME, tails).store;
    assert.deepEqual(contents(await second.fetchAll({ tape: NAME, lastAnchor: true })), ["hi", "hello"]);
    assert.deepEqual(contents(await second.fetchAll({ tape: NAME, afterId: 4 })), ["hi", "hello"]);
    assert.deepEqual(queries.slice(1), [{ tape: NAME, afterId: 3 }]);
    // A read reaching before what it holds, and a text search, go to the store.
    assert.deepEqual(contents(await second.fetchAll({ tape: NAME, kinds: ["system"] })), ["sys"]);
    assert.deepEqual(contents(await second.fetchAll({ tape: NAME, text: "hello" })), ["hello"]);
    assert.deepEqual(queries.slice(2), [
      { tape: NAME, kinds: ["system"] },
      { tape: NAME, text: "hello" },
    ]);
  });

  it("remembering entries: sees another process's appends on refresh and between turns, and its reset (file store)", async () => {
    const directory = join(tempDir("snapshot"), "tapes");
    const mine = watched(createFileTapeStore({ directory }));
    const other = createFileTapeStore({ directory });
    await other.appendBatch(NAME, [entries.anchor("session/start"), entries.message({ role: "user", content: "one" })]);
    const tails = new TapeTails();
    const snapshot = createTapeSnapshot(mine.store, NAME, tails);
    assert.deepEqual(contents(await snapshot.store.fetchAll({ tape: NAME, lastAnchor: true })), ["one"]);
    await other.append(NAME, entries.message({ role: "user", content: "two" }));
    assert.deepEqual(contents(await snapshot.store.fetchAll({ tape: NAME, lastAnchor: true })), ["one"], "a snapshot until refreshed");
    await snapshot.refresh();
    assert.deepEqual(contents(await snapshot.store.fetchAll({ tape: NAME, lastAnchor: true })), ["one", "two"]);
    assert.deepEqual(mine.queries.at(-1), { tape: NAME, afterId: 1 }, "the refresh reads from the last entry held on");

    // Another process appends between two turns: the next turn reads from the last entry held on.
    await other.append(NAME, entries.message({ role: "user", content: "three" }));
    const between = createTapeSnapshot(mine.store, NAME, tails);
    assert.deepEqual(contents(await between.store.fetchAll({ tape: NAME, lastAnchor: true })), ["one", "two", "three"]);
    assert.deepEqual(mine.queries.at(-1), { tape: NAME, afterId: 2 });

    // Reset elsewhere and written again past the same ids: the entry at the last id held has
    // another date, so the whole tape is read.
    await other.reset(NAME);
    await other.appendBatch(NAME, [entries.anchor("session/start"), entries.message({ role: "user", content: "fresh" }), entries.message({ role: "user", content: "again" }), entries.message({ role: "user", content: "more" })]);
    const next = createTapeSnapshot(mine.store, NAME, tails);
    assert.deepEqual(contents(await next.store.fetchAll({ tape: NAME, lastAnchor: true })), ["fresh", "again", "more"]);
    assert.deepEqual(mine.queries.slice(-2), [{ tape: NAME, afterId: 3 }, { tape: NAME }]);
    await mine.store.close?.();
    await other.close();
  });

  it("a gateway's next turn of a file tape reads nothing when the tape still ends with the last entry it held", async () => {
    const directory = join(tempDir("snapshot"), "tapes");
    const mine = watched(createFileTapeStore({ directory }));
    const tapes = createTapes({ store: mine.store, archivePath: join(directory, "archive") });
    const tape = tapes.tape(NAME);
    for (let turn = 0; turn < 3; turn++) {
      const fork = tapes.fork(tapes.snapshot(tape).tape);
      await fork.tape.ensureBootstrapAnchor();
      await fork.tape.readMessages();
      await fork.tape.appendEvent("turn", { turn });
      await fork.merge();
    }
    // Reads of entries (the first turn's bootstrap also asks the store whether an anchor exists, limit 0).
    const reads = mine.queries.filter((query) => query.tape === NAME && query.limit !== 0);
    // The first turn reads the whole (missing) tape. The later ones read no entry: the file
    // store's index says the tape still ends with the last entry the turn before held.
    assert.deepEqual(reads[0], { tape: NAME });
    assert.deepEqual(reads.slice(1), []);
    assert.equal((await mine.store.fetchAll({ tape: NAME })).filter((entry) => entry.kind === "event" && entry.payload.name === "turn").length, 3);
    await mine.store.close?.();
  });

  it("answers 'no anchor' from a whole-tape read; the store below it is what a merge asks", async () => {
    const parent = createMemoryTapeStore();
    const { store, queries } = watched(parent);
    const snapshot = createTapeSnapshot(store, NAME, new TapeTails());
    assert.deepEqual(await snapshot.store.fetchAll({ tape: NAME }), []);
    await parent.appendBatch(NAME, [entries.anchor("session/start"), entries.event("handoff", { name: "session/start" })]);
    await assert.rejects(snapshot.store.fetchAll({ tape: NAME, lastAnchor: true, limit: 0 }), /No anchors found/);
    assert.equal(queries.length, 1);
    assert.equal(storeBelow(snapshot.store), store);
    assert.equal(storeBelow(store), store);
    assert.deepEqual(await storeBelow(snapshot.store).fetchAll({ tape: NAME, lastAnchor: true, limit: 0 }), [], "the other turn's anchor is found below");
  });

  it("one session/start when two turns of a new session run at once", async () => {
    const parent = createMemoryTapeStore();
    const tapes = createTapes({ store: parent, archivePath: "/tmp/unused" });
    const tape = tapes.tape(NAME);
    const forks = [tapes.fork(tapes.snapshot(tape).tape), tapes.fork(tapes.snapshot(tape).tape)];
    for (const fork of forks) await fork.tape.ensureBootstrapAnchor();
    for (const [index, fork] of forks.entries()) await fork.tape.appendEvent("turn", { index });
    for (const fork of forks) await fork.merge();
    const kinds = (await parent.fetchAll({ tape: NAME })).map((entry) => (entry.kind === "anchor" ? "anchor" : String(entry.payload.name)));
    assert.deepEqual(kinds, ["anchor", "handoff", "turn", "turn"]);
  });

  it("a reset through it empties what it holds", async () => {
    const parent = createMemoryTapeStore();
    await parent.appendBatch(NAME, [entries.anchor("session/start"), entries.message({ role: "user", content: "old" })]);
    const { store, queries } = watched(parent);
    const snapshot = createTapeSnapshot(store, NAME, new TapeTails());
    assert.equal((await snapshot.store.fetchAll({ tape: NAME })).length, 2);
    await snapshot.store.reset(NAME);
    await snapshot.store.appendBatch?.(NAME, [entries.anchor("session/start"), entries.message({ role: "user", content: "new" })]);
    assert.deepEqual(contents(await snapshot.store.fetchAll({ tape: NAME })), ["session/start", "new"]);
    assert.equal(queries.length, 1);
    assert.deepEqual(contents(await parent.fetchAll({ tape: NAME })), ["session/start", "new"]);
  });

  it("past its bound, forgets the entries of the tapes used least recently and keeps their anchors", async () => {
    const parent = createMemoryTapeStore();
    const { store, queries } = watched(parent);
    const tails = new TapeTails();
    const names = Array.from({ length: 6 }, (_, index) => `ws__s${index}`);
    // A thousand entries of about two thousand characters each.
    const turn = () => Array.from({ length: 1_000 }, (_, index) => entries.message({ role: "user", content: `${"x".repeat(2_000)}${index}` }));
    for (const name of names) {
      await parent.appendBatch(name, [entries.anchor("session/start"), ...turn()]);
      await createTapeSnapshot(store, name, tails).store.fetchAll({ tape: name, lastAnchor: true });
    }
    // Grown to 3,001 entries (about 6 million characters) from the anchor on, the six no longer
    // fit the bound (32 Mi): the entries of the one read least recently (the first) are forgotten.
    for (const name of names) {
      await parent.appendBatch(name, [...turn(), ...turn()]);
      await createTapeSnapshot(store, name, tails).store.fetchAll({ tape: name, lastAnchor: true });
    }
    queries.length = 0;
    for (const name of names.toReversed()) assert.equal((await createTapeSnapshot(store, name, tails).store.fetchAll({ tape: name, lastAnchor: true })).length, 3_000);
    assert.deepEqual(
      queries.map((query) => query.afterId),
      [3_000, 3_000, 3_000, 3_000, 3_000, 0],
      "five read from their last entry (id 3,001) on; the forgotten one from its anchor (id 1)",
    );
    // A tape holding more than a quarter of the bound is not kept at all: read from its anchor each time.
    await parent.appendBatch("ws__big", [entries.anchor("session/start"), ...Array.from({ length: 5 }, turn).flat()]);
    await createTapeSnapshot(store, "ws__big", tails).store.fetchAll({ tape: "ws__big", lastAnchor: true });
    queries.length = 0;
    await createTapeSnapshot(store, "ws__big", tails).store.fetchAll({ tape: "ws__big", lastAnchor: true });
    assert.deepEqual(queries, [{ tape: "ws__big", afterId: 0 }]);
  });

  it("does not read at all when told where the tape ends and it held the tape up to there", async () => {
    const parent = createMemoryTapeStore();
    const { store, queries } = watched(parent);
    const tails = new TapeTails();
    // A tape never written, as the queue saw it: nothing read; the turn's writes are held.
    const first = createTapeSnapshot(store, NAME, tails, { tape: NAME, id: 0, date: "" });
    assert.deepEqual(await first.store.fetchAll({ tape: NAME }), []);
    const written = await first.store.appendBatch?.(NAME, [entries.anchor("session/start"), entries.message({ role: "user", content: "hi" })]);
    const last = written?.at(-1);
    assert.ok(last);
    assert.equal(queries.length, 0);

    // Where the last turn here left it: answered from what that turn held.
    const second = createTapeSnapshot(store, NAME, tails, { tape: NAME, id: last.id, date: last.date });
    assert.deepEqual(contents(await second.store.fetchAll({ tape: NAME, lastAnchor: true })), ["hi"]);
    assert.equal(queries.length, 0);

    // Another process wrote since: the end told differs, so it reads from the last entry held on.
    const other = await parent.append(NAME, entries.message({ role: "user", content: "elsewhere" }));
    const third = createTapeSnapshot(store, NAME, tails, { tape: NAME, id: other.id, date: other.date });
    assert.deepEqual(contents(await third.store.fetchAll({ tape: NAME, lastAnchor: true })), ["hi", "elsewhere"]);
    assert.deepEqual(queries, [{ tape: NAME, afterId: last.id - 1 }]);

    // An end told for another tape, or after the turn wrote (the end has moved), is not used.
    const elsewhere = createTapeSnapshot(store, NAME, tails, { tape: "ws__other", id: 0, date: "" });
    assert.equal((await elsewhere.store.fetchAll({ tape: NAME })).length, 3);
    const writer = createTapeSnapshot(store, NAME, tails, { tape: NAME, id: 0, date: "" });
    await writer.store.append(NAME, entries.message({ role: "user", content: "mine" }));
    assert.deepEqual(contents(await writer.store.fetchAll({ tape: NAME, lastAnchor: true })), ["hi", "elsewhere", "mine"]);
    assert.equal(queries.length, 3);
  });
});
