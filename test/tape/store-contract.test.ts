// The TapeStore contract, run against the memory, JSONL file, SQLite and PostgreSQL stores alike.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { NewTapeEntry, TapeEntry, TapeStore } from "../../src/kernel/tape-contract.ts";
import { entries } from "../../src/tape/entry.ts";
import { tapeQuery } from "../../src/tape/query.ts";
import { bubError, storeFactories } from "./support/helpers.ts";
import { postgresStoreFactory } from "./support/postgres-store.ts";

const TAPE = "aaaa__bbbb";
const DATE_FORMAT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$/;

function dated(entry: NewTapeEntry, date: string): NewTapeEntry {
  return { ...entry, date };
}

const names = (found: TapeEntry[]) => found.map((entry) => String(entry.payload.name ?? entry.payload.content));
const ids = (found: TapeEntry[]) => found.map((entry) => entry.id);

/** A tape: a(1) e1(2) b(3) e2(4) a(5) e3(6) b(7) e4(8). */
async function anchoredTape(store: TapeStore): Promise<void> {
  await store.appendBatch!(TAPE, [
    entries.anchor("a"),
    entries.event("e1"),
    entries.anchor("b"),
    entries.event("e2"),
    entries.anchor("a", { round: 2 }),
    entries.event("e3"),
    entries.anchor("b"),
    entries.event("e4"),
  ]);
}

const factories: readonly (readonly [string, () => TapeStore | Promise<TapeStore>])[] = [...storeFactories, ["postgres", postgresStoreFactory()]];

for (const [storeName, makeStore] of factories) {
  describe(`TapeStore contract: ${storeName}`, () => {
    it("assigns ids from 1 per tape and returns the stored entry", async () => {
      const store = await makeStore();
      const first = await store.append(TAPE, entries.message({ role: "user", content: "hi" }, { run_id: "r1" }));
      const second = await store.append(TAPE, entries.event("ping"));
      const other = await store.append("cccc__dddd", entries.event("elsewhere"));
      assert.equal(first.id, 1);
      assert.equal(second.id, 2);
      assert.equal(other.id, 1);
      assert.equal(first.kind, "message");
      assert.deepEqual(first.payload, { role: "user", content: "hi" });
      assert.deepEqual(first.meta, { run_id: "r1" });
      assert.match(first.date, DATE_FORMAT);
      assert.deepEqual(await store.fetchAll({ tape: TAPE }), [first, second]);
      await store.close?.();
    });

    it("appends a batch in order with consecutive ids", async () => {
      const store = await makeStore();
      await store.append(TAPE, entries.event("before"));
      const stored = await store.appendBatch!(TAPE, [entries.event("x"), entries.event("y"), entries.event("z")]);
      assert.deepEqual(ids(stored), [2, 3, 4]);
      assert.deepEqual(names(await store.fetchAll({ tape: TAPE })), ["before", "x", "y", "z"]);
      assert.deepEqual(await store.appendBatch!(TAPE, []), []);
      await store.close?.();
    });

    it("gives unique, increasing ids to concurrent appends", async () => {
      const store = await makeStore();
      const stored = await Promise.all(Array.from({ length: 40 }, (_, index) => store.append(TAPE, entries.event(`e${index}`))));
      const all = ids(await store.fetchAll({ tape: TAPE }));
      assert.deepEqual(all, Array.from({ length: 40 }, (_, index) => index + 1));
      assert.deepEqual([...ids(stored)].sort((a, b) => a - b), all);
      await store.close?.();
    });

    it("keeps dates, meta, unknown kinds and non-ASCII text as given", async () => {
      const store = await makeStore();
      const entry = { kind: "custom.kind", payload: { text: "Grüße, 世界 🙂", nested: { list: [1, "zwei", null] } }, meta: { context: false }, date: "2025-03-04T05:06:07.000008+00:00" };
      const stored = await store.append(TAPE, entry);
      assert.deepEqual({ ...stored, id: undefined }, { ...entry, id: undefined });
      assert.deepEqual(await store.fetchAll({ tape: TAPE }), [stored]);
      await store.close?.();
    });

    it("rejects entries that are not entry-shaped and stores nothing", async () => {
      const store = await makeStore();
      await assert.rejects(store.append(TAPE, { kind: 7, payload: {} } as unknown as NewTapeEntry), bubError("invalid_input", /non-empty string kind/));
      await assert.rejects(store.append(TAPE, { kind: "event", payload: [] } as unknown as NewTapeEntry), bubError("invalid_input", /payload .* must be an object/));
      await assert.rejects(store.appendBatch!(TAPE, [entries.event("ok"), { kind: "event", payload: null } as unknown as NewTapeEntry]), bubError("invalid_input", /must be an object/));
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      await assert.rejects(store.append(TAPE, entries.event("cycle", cyclic)), bubError("invalid_input", /not JSON-serializable/));
      assert.deepEqual(await store.fetchAll({ tape: TAPE }), []);
      assert.equal((await store.append(TAPE, entries.event("first"))).id, 1);
      await store.close?.();
    });

    it("returns copies that callers may change freely", async () => {
      const store = await makeStore();
      const stored = await store.append(TAPE, entries.event("e", { list: [1] }));
      (stored.payload.data as { list: number[] }).list.push(2);
      const [read] = await store.fetchAll({ tape: TAPE });
      (read!.payload.data as { list: number[] }).list.push(3);
      assert.deepEqual((await store.fetchAll({ tape: TAPE }))[0]!.payload, { name: "e", data: { list: [1] } });
      await store.close?.();
    });

    it("lists tapes sorted, without sidecar tapes", async () => {
      const store = await makeStore();
      assert.deepEqual(await store.listTapes(), []);
      for (const name of ["ws2__s", "ws1__s", "ws1__s__sidecar__spill"]) await store.append(name, entries.event("x"));
      assert.deepEqual(await store.listTapes(), ["ws1__s", "ws2__s"]);
      await store.close?.();
    });

    it("reads an unknown tape as empty, and anchor slicing on it as not found", async () => {
      const store = await makeStore();
      assert.deepEqual(await store.fetchAll({ tape: "nope__nope" }), []);
      await assert.rejects(store.fetchAll({ tape: "nope__nope", lastAnchor: true }), bubError("not_found", "No anchors found in tape."));
      await store.close?.();
    });

    it("forgets a tape on reset and starts its ids again", async () => {
      const store = await makeStore();
      await store.appendBatch!(TAPE, [entries.event("a"), entries.event("b")]);
      await store.append("keep__me", entries.event("kept"));
      await store.reset(TAPE);
      assert.deepEqual(await store.fetchAll({ tape: TAPE }), []);
      assert.deepEqual(await store.listTapes(), ["keep__me"]);
      assert.equal((await store.append(TAPE, entries.event("again"))).id, 1);
      assert.equal((await store.fetchAll({ tape: "keep__me" })).length, 1);
      await store.reset("never__existed");
      await store.close?.();
    });

    it("reads after the last anchor", async () => {
      const store = await makeStore();
      await anchoredTape(store);
      assert.deepEqual(names(await store.fetchAll({ tape: TAPE, lastAnchor: true })), ["e4"]);
      await store.append(TAPE, entries.anchor("c"));
      assert.deepEqual(await store.fetchAll({ tape: TAPE, lastAnchor: true }), []);
      await store.append("plain__tape", entries.event("no anchors"));
      await assert.rejects(store.fetchAll({ tape: "plain__tape", lastAnchor: true }), bubError("not_found", "No anchors found in tape."));
      await store.close?.();
    });

    it("reads after the last anchor with a name", async () => {
      const store = await makeStore();
      await anchoredTape(store);
      assert.deepEqual(names(await store.fetchAll({ tape: TAPE, afterAnchor: "a" })), ["e3", "b", "e4"]);
      assert.deepEqual(ids(await store.fetchAll({ tape: TAPE, afterAnchor: "b" })), [8]);
      await assert.rejects(store.fetchAll({ tape: TAPE, afterAnchor: "zzz" }), bubError("not_found", "Anchor 'zzz' was not found."));
      assert.equal((await store.fetchAll(tapeQuery(TAPE).afterAnchor("").build())).length, 8);
      await store.close?.();
    });

    it("reads strictly between the last start anchor and the next end anchor", async () => {
      const store = await makeStore();
      await anchoredTape(store);
      assert.deepEqual(ids(await store.fetchAll({ tape: TAPE, betweenAnchors: { start: "a", end: "b" } })), [6]);
      // the last "b" (7) has no "a" after it
      await assert.rejects(store.fetchAll({ tape: TAPE, betweenAnchors: { start: "b", end: "a" } }), bubError("not_found", "Anchor 'a' was not found."));
      await store.append(TAPE, entries.anchor("a"));
      assert.deepEqual(ids(await store.fetchAll({ tape: TAPE, betweenAnchors: { start: "b", end: "a" } })), [8]);
      await assert.rejects(store.fetchAll({ tape: TAPE, betweenAnchors: { start: "x", end: "b" } }), bubError("not_found", "Anchor 'x' was not found."));
      await assert.rejects(store.fetchAll({ tape: TAPE, betweenAnchors: { start: "b", end: "zz" } }), bubError("not_found", "Anchor 'zz' was not found."));
      // betweenAnchors wins over lastAnchor, which wins over afterAnchor
      assert.deepEqual(ids(await store.fetchAll({ tape: TAPE, betweenAnchors: { start: "b", end: "a" }, lastAnchor: true })), [8]);
      assert.deepEqual(ids(await store.fetchAll({ tape: TAPE, lastAnchor: true, afterAnchor: "b" })), []);
      assert.deepEqual(ids(await store.fetchAll({ tape: TAPE, afterAnchor: "b" })), [8, 9]);
      await store.close?.();
    });

    it("filters by dates with whole-day date bounds and single bounds", async () => {
      const store = await makeStore();
      await store.appendBatch!(TAPE, [
        dated(entries.event("jan1-late"), "2026-01-01T23:59:59.999999+00:00"),
        dated(entries.event("jan2-start"), "2026-01-02T00:00:00.000000+00:00"),
        dated(entries.event("jan2-noon"), "2026-01-02T12:00:00.000000+00:00"),
        dated(entries.event("jan3"), "2026-01-03T00:00:00.000001+00:00"),
        dated(entries.event("legacy-format"), "2026-01-02T18:00:00+00:00"),
      ]);
      const between = (start?: string, end?: string) => store.fetchAll({ tape: TAPE, betweenDates: { start, end } }).then(names);
      assert.deepEqual(await between("2026-01-02", "2026-01-02"), ["jan2-start", "jan2-noon", "legacy-format"]);
      assert.deepEqual(await between("2026-01-02T12:00:00", "2026-01-02T12:00:00Z"), ["jan2-noon"]);
      assert.deepEqual(await between("2026-01-02T13:00:00+01:00", "2026-01-02T12:00:00.000000+00:00"), ["jan2-noon"]);
      assert.deepEqual(await between("2026-01-03"), ["jan3"]);
      assert.deepEqual(await between(undefined, "2026-01-01"), ["jan1-late"]);
      assert.deepEqual(await between("", "2026-01-01"), ["jan1-late"]);
      await assert.rejects(between("2026-13-01", "2026-01-02"), bubError("invalid_input", "Invalid ISO date or datetime: '2026-13-01'."));
      await assert.rejects(between("2026-01-01", "yesterday"), bubError("invalid_input", "Invalid ISO date or datetime: 'yesterday'."));
      await assert.rejects(between("2026-01-03", "2026-01-02"), bubError("invalid_input", "Start date must be earlier than or equal to end date."));
      await store.close?.();
    });

    it("searches text case-insensitively in the whole entry, non-ASCII included, newest first", async () => {
      const store = await makeStore();
      await store.appendBatch!(TAPE, [
        entries.message({ role: "user", content: "Ärger mit dem Drucker" }),
        entries.event("printer", { note: "the PRINTER jammed" }),
        entries.message({ role: "assistant", content: "nothing relevant" }, { tag: "printer-meta" }),
        entries.message({ role: "user", content: "ärger again" }),
      ]);
      assert.deepEqual(ids(await store.fetchAll({ tape: TAPE, text: "printer" })), [3, 2]);
      assert.deepEqual(ids(await store.fetchAll({ tape: TAPE, text: "ÄRGER" })), [4, 1]);
      assert.deepEqual(ids(await store.fetchAll({ tape: TAPE, text: "ärger", limit: 1 })), [4]);
      assert.deepEqual(ids(await store.fetchAll({ tape: TAPE, text: "ärger", kinds: ["event"] })), []);
      assert.deepEqual(ids(await store.fetchAll({ tape: TAPE, text: '"role": "assistant"' })), [3]);
      assert.deepEqual(await store.fetchAll({ tape: TAPE, text: "absent" }), []);
      await store.close?.();
    });

    it("filters kinds and limits oldest first after slicing", async () => {
      const store = await makeStore();
      await anchoredTape(store);
      await store.appendBatch!(TAPE, [entries.message({ role: "user", content: "m1" }), entries.event("e5"), entries.message({ role: "user", content: "m2" })]);
      assert.deepEqual(ids(await store.fetchAll({ tape: TAPE, kinds: ["anchor"] })), [1, 3, 5, 7]);
      assert.deepEqual(ids(await store.fetchAll({ tape: TAPE, kinds: ["anchor"], limit: 2 })), [1, 3]);
      assert.deepEqual(ids(await store.fetchAll({ tape: TAPE, lastAnchor: true, kinds: ["event", "message"], limit: 3 })), [8, 9, 10]);
      assert.deepEqual(ids(await store.fetchAll({ tape: TAPE, kinds: [], limit: 2 })), [1, 2]);
      assert.deepEqual(await store.fetchAll({ tape: TAPE, limit: 0 }), []);
      await assert.rejects(store.fetchAll({ tape: TAPE, limit: -1 }), bubError("invalid_input", /limit must be a whole number/));
      await store.close?.();
    });

    it("reads only the entries after an id, with the other filters, oldest first (newest first for text)", async () => {
      const store = await makeStore();
      await anchoredTape(store);
      await store.appendBatch!(TAPE, [entries.message({ role: "user", content: "m1" }), entries.event("e5"), entries.message({ role: "user", content: "m2" })]);
      assert.deepEqual(ids(await store.fetchAll({ tape: TAPE, afterId: 6 })), [7, 8, 9, 10, 11]);
      assert.deepEqual(ids(await store.fetchAll({ tape: TAPE, afterId: 3, kinds: ["event"] })), [4, 6, 8, 10]);
      assert.deepEqual(ids(await store.fetchAll({ tape: TAPE, afterId: 3, kinds: ["event"], limit: 2 })), [4, 6]);
      assert.deepEqual(ids(await store.fetchAll({ tape: TAPE, afterId: 2, lastAnchor: true })), [8, 9, 10, 11]);
      assert.deepEqual(ids(await store.fetchAll({ tape: TAPE, afterId: 9, lastAnchor: true })), [10, 11]);
      assert.deepEqual(ids(await store.fetchAll({ tape: TAPE, afterId: 5, text: "NAME" })), [10, 8, 7, 6]);
      assert.deepEqual(ids(await store.fetchAll({ tape: TAPE, afterId: 5, text: "NAME", limit: 1 })), [10]);
      assert.deepEqual(await store.fetchAll({ tape: TAPE, afterId: 11 }), []);
      assert.deepEqual(ids(await store.fetchAll({ tape: TAPE, afterId: 0, kinds: ["anchor"] })), [1, 3, 5, 7]);
      assert.deepEqual(ids(await store.fetchAll(tapeQuery(TAPE).kinds("message").afterId(9).build())), [11]);
      await assert.rejects(store.fetchAll({ tape: TAPE, afterId: -1 }), bubError("invalid_input", /afterId must be a whole number/));
      await assert.rejects(store.fetchAll({ tape: TAPE, afterId: 1.5 }), bubError("invalid_input", /afterId must be a whole number/));
      await store.close?.();
    });

    it("runs queries written with the builder", async () => {
      const store = await makeStore();
      await anchoredTape(store);
      const query = tapeQuery(TAPE).afterAnchor("a").kinds("event", "anchor").limit(2);
      assert.deepEqual(ids(await store.fetchAll(query.build())), [6, 7]);
      assert.deepEqual(ids(await store.fetchAll(query.lastAnchor().build())), [8]);
      await store.close?.();
    });
  });
}
