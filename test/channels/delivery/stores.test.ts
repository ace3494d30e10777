import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, describe, it } from "node:test";
import pg from "pg";
import { openPostgresDeliveryStore } from "../../../src/channels/delivery/postgres-store.ts";
import { openSqliteDeliveryStore } from "../../../src/channels/delivery/sqlite-store.ts";
import type { DeliveryStore, NewDelivery } from "../../../src/channels/delivery/types.ts";
import { usePostgres } from "../../support/postgres.ts";
import { tempDir } from "../../support/temp.ts";

const postgres = usePostgres();

const outbound = (chatId: string, text: string, inbound: number[] = []): NewDelivery => ({ source: "telegram-1", chatId, sessionId: `telegram:${chatId}`, text, inbound });

/** The same contract, run against each store; `reopen` gives a second handle on the same ledger (another process). */
function contract(name: string, open: () => Promise<{ store: DeliveryStore; reopen: () => Promise<DeliveryStore> }>): void {
  describe(`${name} delivery store`, () => {
    it("records in order, keeps progress, forgets a confirmed record and keeps a possibly repeated one as sent", async () => {
      const { store, reopen } = await open();
      const [a, b] = await store.record("me", [outbound("7", "first", [11, 12]), outbound("7", "second")]);
      const [c] = await store.record("me", [outbound("8", "third")]);
      assert.ok(a && b && c && a.id < b.id && b.id < c.id);
      assert.deepEqual([a.state, a.partsDone, a.attempts, a.possiblyRepeated, a.inbound], ["pending", 0, 0, false, [11, 12]]);
      await store.progress(a.id, 1);
      await store.confirm(b.id, false);
      await store.failed(c.id, 1, true, "reset");
      await store.confirm(c.id, true);
      // Another process (a restart) taking over sees the pending one with its progress.
      const other = await reopen();
      const taken = await other.claim("telegram-1", "next", true);
      assert.deepEqual(taken.map((record) => [record.id, record.text, record.partsDone, record.inbound]), [[a.id, "first", 1, [11, 12]]]);
      assert.deepEqual((await other.list(["sent"])).map((record) => [record.text, record.possiblyRepeated, record.error]), [["third", true, "reset"]]);
      assert.deepEqual(await other.claim("telegram-2", "next", true), [], "another bot's records are not taken");
      await other.close();
      await store.close();
    });

    it("records a keyed outbound once: a second with the same key is left out, even after the first was confirmed and forgotten", async () => {
      const { store, reopen } = await open();
      const [a] = await store.record("me", [{ ...outbound("7", "reply 0"), key: "telegram:1:5#0" }]);
      assert.ok(a);
      assert.deepEqual(await store.record("me", [{ ...outbound("7", "reply 0 again"), key: "telegram:1:5#0" }]), [], "pending: left out");
      await store.confirm(a.id, false);
      const other = await reopen();
      const again = await other.record("other", [{ ...outbound("7", "reply 0, a re-run"), key: "telegram:1:5#0" }, { ...outbound("7", "reply 1"), key: "telegram:1:5#1" }, outbound("7", "unkeyed")]);
      assert.deepEqual(again.map((record) => record.text), ["reply 1", "unkeyed"], "confirmed and deleted: still left out");
      assert.deepEqual((await other.record("other", [outbound("7", "unkeyed")])).map((record) => record.text), ["unkeyed"], "outbounds without a key are never left out");
      // A copy still pending under a process that died is taken over, and sent instead of the new one.
      const [pending] = await store.record("dead", [{ ...outbound("9", "the first wording"), key: "telegram:1:6#0" }]);
      const adopted = await other.record("other", [{ ...outbound("9", "a second wording"), key: "telegram:1:6#0" }]);
      assert.deepEqual(adopted.map((record) => [record.id, record.text]), [[pending?.id, "the first wording"]]);
      assert.deepEqual(await other.claim("telegram-1", "third", false), [], "now leased by the one that took it over");
      await other.close();
      await store.close();
    });

    it("leaves records a live owner leases alone, takes ownerless ones, and moves dead letters through retry and purge", async () => {
      const { store, reopen } = await open();
      const [a, b] = await store.record("one", [outbound("7", "a"), outbound("7", "b")]);
      assert.ok(a && b);
      const two = await reopen();
      assert.deepEqual(await two.claim("telegram-1", "two", false), [], "leased by a live owner");
      await store.deadLetter(a.id, 3, false, "403 blocked");
      await store.deadLetter(b.id, 1, true, "400 chat not found");
      assert.deepEqual((await two.list(["dead"])).map((record) => [record.id, record.attempts, record.error]), [[a.id, 3, "403 blocked"], [b.id, 1, "400 chat not found"]]);
      assert.equal(await two.retry([a.id, 999_999]), 1, "only dead letters move");
      const [back] = await two.claim("telegram-1", "two", false);
      assert.deepEqual([back?.id, back?.state, back?.attempts, back?.possiblyRepeated], [a.id, "pending", 0, false]);
      assert.equal(await two.purge([a.id]), 0, "a pending record is not purged");
      assert.equal(await two.purge(null), 1);
      assert.deepEqual(await two.list(["dead", "sent"]), []);
      assert.equal(await two.retry(null), 0);
      await two.close();
      await store.close();
    });
  });
}

contract("SQLite", async () => {
  const dir = await tempDir();
  after(() => dir.cleanup());
  const path = join(dir.path, "delivery.sqlite3");
  return { store: openSqliteDeliveryStore(path), reopen: async () => openSqliteDeliveryStore(path) };
});

contract("PostgreSQL", async () => {
  const url = await (await postgres()).createDatabase();
  return { store: await openPostgresDeliveryStore(url), reopen: () => openPostgresDeliveryStore(url) };
});

describe("PostgreSQL delivery store, round trips", () => {
  it("records a keyed outbound, and takes a pending earlier copy over, in one statement each (no transaction around them)", async () => {
    const url = await (await postgres()).createDatabase();
    const store = await openPostgresDeliveryStore(url);
    const client = pg.Client.prototype;
    const original = client.query;
    const sent: string[] = [];
    client.query = function (this: pg.Client, ...args: unknown[]) {
      const first = args[0];
      sent.push(typeof first === "string" ? first : typeof first === "object" && first !== null && "text" in first ? String(first.text) : "?");
      return Reflect.apply(original, this, args);
    } as typeof original;
    try {
      const [first] = await store.record("dead", [{ ...outbound("3", "reply 0"), key: "telegram:1:8#0" }]);
      assert.equal(sent.length, 1, `one statement: ${sent.join(" | ")}`);
      const [taken] = await store.record("live", [{ ...outbound("3", "reply 0, again"), key: "telegram:1:8#0" }]);
      assert.equal(sent.length, 2, `one statement: ${sent.join(" | ")}`);
      assert.deepEqual([taken?.id, taken?.text], [first?.id, "reply 0"]);
    } finally {
      client.query = original;
      await store.close();
    }
  });
});

describe("a ledger made by an earlier version", () => {
  it("gets the options column and the keys table (SQLite), keeping its records", async () => {
    const dir = await tempDir();
    after(() => dir.cleanup());
    const path = join(dir.path, "delivery.sqlite3");
    const old = new DatabaseSync(path);
    old.exec(`CREATE TABLE deliveries (id INTEGER PRIMARY KEY AUTOINCREMENT, source TEXT NOT NULL, chat_id TEXT NOT NULL, session_id TEXT NOT NULL, text TEXT NOT NULL, inbound TEXT NOT NULL DEFAULT '[]', parts_done INTEGER NOT NULL DEFAULT 0, attempts INTEGER NOT NULL DEFAULT 0, state TEXT NOT NULL DEFAULT 'pending', possibly_repeated INTEGER NOT NULL DEFAULT 0, error TEXT NOT NULL DEFAULT '', owner TEXT, lease_until INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
      INSERT INTO deliveries (source, chat_id, session_id, text, created_at, updated_at) VALUES ('telegram-1', '7', 'telegram:7', 'from before', 1, 1);`);
    old.close();
    const store = openSqliteDeliveryStore(path);
    const [kept] = await store.claim("telegram-1", "me", true);
    assert.deepEqual([kept?.text, kept?.options], ["from before", ""]);
    const [fresh] = await store.record("me", [{ ...outbound("7", "new"), key: "k#0", options: '{"send":{}}' }]);
    assert.deepEqual([fresh?.text, fresh?.options], ["new", '{"send":{}}']);
    assert.deepEqual(await store.record("me", [{ ...outbound("7", "again"), key: "k#0" }]), []);
    await store.close();
  });
});
