/**
 * The three link stores (file, SQLite, PostgreSQL on an embedded server) keep the same
 * state: links made through one store object are seen by another on the same storage (as
 * by another process), wrong codes are counted although the change that refuses them
 * throws, and concurrent changes lose nothing.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { issueCode, MAX_FAILURES, redeemCode } from "../../../src/channels/links/codes.ts";
import { linkStorageOf, openLinkStore, type LinkStorage } from "../../../src/channels/links/store-from-settings.ts";
import type { LinkStore } from "../../../src/channels/links/store.ts";
import { usePostgres } from "../../support/postgres.ts";
import { tempDir } from "../../support/temp.ts";

const postgres = usePostgres();
const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function home(): Promise<string> {
  const dir = await tempDir("bub-links-");
  cleanups.push(dir.cleanup);
  return dir.path;
}

async function open(storage: LinkStorage): Promise<LinkStore> {
  const store = await openLinkStore(storage);
  cleanups.push(() => store.close());
  return store;
}

const kinds: Record<string, () => Promise<LinkStorage>> = {
  file: async () => ({ kind: "file", home: await home() }),
  sqlite: async () => ({ kind: "sqlite", home: await home(), dsn: "" }),
  postgres: async () => ({ kind: "postgres", url: await (await postgres()).createDatabase("bub_links") }),
};

for (const [kind, storage] of Object.entries(kinds)) {
  describe(`the ${kind} link store`, () => {
    it("starts empty, and a link made through one store object is seen through another", async () => {
      const where = await storage();
      const [one, two] = [await open(where), await open(where)];
      assert.deepEqual(await one.list(), []);
      assert.equal(await one.personOf("telegram:7"), null);
      const code = await one.update((state) => issueCode(state, "cli:alice"));
      const person = await two.update((state) => redeemCode(state, code, "telegram:7"));
      assert.deepEqual(person.identities, ["cli:alice", "telegram:7"]);
      assert.equal((await one.personOf("telegram:7"))?.id, person.id);
      assert.deepEqual((await one.list()).map((listed) => listed.id), [person.id]);
    });

    it("counts wrong codes although the change that refuses them throws", async () => {
      const store = await open(await storage());
      const code = await store.update((state) => issueCode(state, "cli:alice"));
      for (let attempt = 0; attempt < MAX_FAILURES; attempt++) {
        await assert.rejects(store.update((state) => redeemCode(state, "WRONG234", "telegram:9")), /wrong, expired or used/);
      }
      await assert.rejects(store.update((state) => redeemCode(state, code, "telegram:9")), /Too many wrong link codes/);
      assert.equal(await store.personOf("telegram:9"), null);
    });

    it("loses no change when store objects change the links at once", async () => {
      const where = await storage();
      const stores = [await open(where), await open(where)];
      const identities = Array.from({ length: 8 }, (_, index) => `telegram:${100 + index}`);
      await Promise.all(identities.map((identity, index) => stores[index % 2].update((state) => issueCode(state, identity))));
      const pending = await stores[0].update((state) => state.codes.map((code) => code.identity).sort());
      assert.deepEqual(pending, [...identities].sort());
    });
  });
}

describe("the links' storage follows the settings", () => {
  const settings = (values: Record<string, string>) => ({ getValue: (path: string, fallback?: unknown) => values[path] ?? fallback });

  it("PostgreSQL when BUB_DATABASE_URL is set, SQLite with BUB_TAPE_STORE=sqlite, else the home folder's file", () => {
    assert.deepEqual(linkStorageOf(settings({ database_url: " postgres://u:p@h/db ", tape_store: "sqlite" }), "/h"), { kind: "postgres", url: "postgres://u:p@h/db" });
    assert.deepEqual(linkStorageOf(settings({ tape_store: "sqlite", tape_dsn: "/x/t.db" }), "/h"), { kind: "sqlite", home: "/h", dsn: "/x/t.db" });
    assert.deepEqual(linkStorageOf(settings({}), "/h"), { kind: "file", home: "/h" });
  });

  it("keeps the SQLite links in the tape database file", async () => {
    const dir = await home();
    const store = await open({ kind: "sqlite", home: dir, dsn: "" });
    await store.update((state) => issueCode(state, "cli:alice"));
    const { DatabaseSync } = await import("node:sqlite");
    const database = new DatabaseSync(join(dir, "tapes.sqlite3"));
    const row = database.prepare("SELECT state FROM identity_links").get();
    database.close();
    assert.match(String(row?.state), /cli:alice/);
  });
});
