// The PostgreSQL tape store beyond the shared contract: two pools writing one tape, schema
// migrations run by processes that start together, the name index and stats, forks, long
// tapes read in pages, errors without the password, and `pg` loaded only when used.
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import pg from "pg";
import type { TapeEntry } from "../../src/kernel/tape-contract.ts";
import { entries } from "../../src/tape/entry.ts";
import { forkTape } from "../../src/tape/fork.ts";
import { createPostgresTapeStore } from "../../src/tape/postgres/lazy-store.ts";
import { migrate, SCHEMA_VERSION } from "../../src/tape/postgres/schema.ts";
import { createTape } from "../../src/tape/tape.ts";
import { createTapes, resolveWorkspace } from "../../src/tape/tapes.ts";
import { usePostgres } from "../support/postgres.ts";
import { freePort } from "../support/ports.ts";
import { bubError, tempDir } from "./support/helpers.ts";
import { freshSchemaUrl } from "./support/postgres-store.ts";

const postgres = usePostgres();
const TAPE = "ws__session";
const root = fileURLToPath(new URL("../..", import.meta.url));

async function freshUrl(): Promise<string> {
  return freshSchemaUrl(await postgres());
}

/** What `run` answers, and how many statements `pg` sent meanwhile (a pool's query is one client query). */
async function countStatements<T>(run: () => Promise<T>): Promise<{ statements: number; result: T }> {
  const query = pg.Client.prototype.query;
  let statements = 0;
  pg.Client.prototype.query = function (this: pg.Client, ...args: Parameters<typeof query>) {
    statements++;
    return Reflect.apply(query, this, args);
  } as typeof query;
  try {
    const result = await run();
    return { statements, result };
  } finally {
    pg.Client.prototype.query = query;
  }
}

describe("PostgreSQL tape store", () => {
  it("keeps ids unique and increasing when two pools append to one tape at once", async () => {
    const url = await freshUrl();
    await using first = createPostgresTapeStore({ url, maxConnections: 4 });
    await using second = createPostgresTapeStore({ url, maxConnections: 4 });
    const writes = Array.from({ length: 200 }, (_, index) =>
      index % 3 === 0 ? (index % 2 ? first : second).appendBatch(TAPE, [entries.event(`b${index}a`), entries.event(`b${index}b`)]) : (index % 2 ? first : second).append(TAPE, entries.event(`e${index}`)),
    );
    const stored = (await Promise.all(writes)).flat();
    const all = await first.fetchAll({ tape: TAPE });
    assert.equal(all.length, stored.length);
    assert.deepEqual(all.map((entry) => entry.id), Array.from({ length: all.length }, (_, index) => index + 1));
    // What each writer was told matches what is stored, and a batch got consecutive ids.
    const byId = new Map(all.map((entry) => [entry.id, entry.payload.name]));
    for (const entry of stored) assert.equal(byId.get(entry.id), entry.payload.name);
    const batchA = stored.find((entry) => entry.payload.name === "b0a")!;
    assert.equal(byId.get(batchA.id + 1), "b0b");
  });

  it("keeps ids unique and increasing when two processes append to one tape at once", async () => {
    const url = await freshUrl();
    // Each process appends 150 entries, 10 at a time, in batches of 1 to 3, and prints the ids it was given.
    const script = `
      const { createPostgresTapeStore } = await import("./src/tape/postgres/lazy-store.ts");
      const store = createPostgresTapeStore({ url: process.env.URL });
      const ids = [];
      for (let round = 0; round < 15; round++) {
        const batches = await Promise.all(Array.from({ length: 10 }, (_, slot) => {
          const size = 1 + ((round + slot) % 3);
          return store.appendBatch("${TAPE}", Array.from({ length: size }, (_, k) => ({ kind: "event", payload: { name: process.env.WHO + "-" + round + "-" + slot + "-" + k } })));
        }));
        ids.push(...batches.flat().map((entry) => entry.id));
      }
      await store.close();
      console.log(JSON.stringify(ids));`;
    const run = (who: string) =>
      new Promise<number[]>((resolve, reject) =>
        execFile(process.execPath, ["--input-type=module", "-e", script], { cwd: root, env: { ...process.env, URL: url, WHO: who } }, (error, stdout) =>
          error ? reject(error) : resolve(JSON.parse(stdout.trim()) as number[]),
        ),
      );
    const [a, b] = await Promise.all([run("a"), run("b")]);
    await using store = createPostgresTapeStore({ url });
    const all = await store.fetchAll({ tape: TAPE });
    assert.deepEqual(all.map((entry) => entry.id), Array.from({ length: all.length }, (_, index) => index + 1));
    assert.deepEqual([...a, ...b].sort((x, y) => x - y), all.map((entry) => entry.id));
    const writers = new Set(all.map((entry) => String(entry.payload.name).split("-")[0]));
    assert.deepEqual([...writers].sort(), ["a", "b"]);
  });

  it("migrates once when several processes start together, and again does nothing", async () => {
    const url = await freshUrl();
    const clients = Array.from({ length: 4 }, () => new pg.Client({ connectionString: url }));
    await Promise.all(clients.map((client) => client.connect()));
    try {
      const applied = await Promise.all(clients.map((client) => migrate(client)));
      assert.deepEqual(applied.filter((versions) => versions.length > 0), [Array.from({ length: SCHEMA_VERSION }, (_, index) => index + 1)]);
      assert.deepEqual(await migrate(clients[0]!), []);
      const { rows } = await clients[0]!.query("SELECT version FROM bub_schema_migrations ORDER BY version");
      assert.deepEqual(rows.map((row: { version: number }) => row.version), Array.from({ length: SCHEMA_VERSION }, (_, index) => index + 1));
      // Stores opened together on a fresh schema migrate it safely on their first calls.
      const other = await freshUrl();
      const stores = Array.from({ length: 3 }, () => createPostgresTapeStore({ url: other }));
      await Promise.all(stores.map((store, index) => store.append(TAPE, entries.event(`s${index}`))));
      assert.equal((await stores[0]!.fetchAll({ tape: TAPE })).length, 3);
      await Promise.all(stores.map((store) => store.close()));
      // A database migrated by a newer Bub is refused with what to do.
      await clients[0]!.query("INSERT INTO bub_schema_migrations (version, name) VALUES ($1, 'from the future')", [SCHEMA_VERSION + 1]);
      await assert.rejects(migrate(clients[0]!), bubError("config", /newer than this Bub knows .*: upgrade Bub/));
    } finally {
      await Promise.all(clients.map((client) => client.end()));
    }
  });

  it("keeps the name index and answers stats from one query", async () => {
    await using store = createPostgresTapeStore({ url: await freshUrl() });
    const batch = [
      entries.event("loop.start", {}, { turn_id: "t1" }),
      entries.message({ role: "user", content: "hi" }, { turn_id: "t1" }),
      entries.event("command", { line: ",help" }),
      entries.event("loop.start", {}, { turn_id: "t2" }),
    ];
    const single = entries.event("x");
    const storedB = await store.appendBatch("b__s", batch.map((entry, index) => ({ ...entry, date: `2026-01-02T03:04:0${index}.000000+00:00` })));
    const storedA = await store.appendBatch("a__s", [{ ...single, date: "2026-01-03T00:00:00.000000+00:00" }]);
    await store.append("a__s__sidecar__spill", entries.event("spilled"));
    // bytes: the JSON text of each row's payload and meta, plus its kind and date
    const bytes = (list: TapeEntry[]) => list.reduce((sum, entry) => sum + [JSON.stringify(entry.payload), JSON.stringify(entry.meta), entry.kind, entry.date].reduce((n, text) => n + Buffer.byteLength(text), 0), 0);
    assert.deepEqual(await store.tapeStats(), [
      { tape: "a__s", entries: 1, turns: 0, lastDate: "2026-01-03T00:00:00.000000+00:00", bytes: bytes(storedA) },
      { tape: "b__s", entries: 4, turns: 3, lastDate: "2026-01-02T03:04:03.000000+00:00", bytes: bytes(storedB) },
    ]);
    await store.recordTapeName({ tape: "b__s", sessionId: "telegram:42", workspace: "/srv/bot" });
    await store.recordTapeName({ tape: "b__s", sessionId: "other", workspace: "/other" });
    await store.recordTapeName({ tape: "a__s", sessionId: "cli", workspace: "/srv/bot" });
    assert.deepEqual(await store.tapeNames(), [
      { tape: "a__s", sessionId: "cli", workspace: "/srv/bot" },
      { tape: "b__s", sessionId: "telegram:42", workspace: "/srv/bot" },
    ]);
  });

  it("learns a session tape when the tapes service first names it, and close waits for that write", async () => {
    const url = await freshUrl();
    const store = createPostgresTapeStore({ url });
    const workspace = tempDir("pg-workspace");
    const tapes = createTapes({ store, archivePath: tempDir("pg-archive") });
    const tape = tapes.sessionTape("telegram:7", workspace);
    tapes.sessionTape("temp/abc", workspace);
    await store.close(); // the record is written in the background: close lets it finish
    await using reader = createPostgresTapeStore({ url });
    assert.deepEqual(await reader.tapeNames(), [{ tape: tape.name, sessionId: "telegram:7", workspace: resolveWorkspace(workspace) }]);
  });

  it("records a session tape's name with the tape's first append here, in the same statement", async () => {
    const url = await freshUrl();
    await using store = createPostgresTapeStore({ url });
    await using reader = createPostgresTapeStore({ url });
    await store.append(TAPE, entries.event("loads the driver and the schema"));
    const { statements } = await countStatements(async () => {
      await store.recordTapeName({ tape: "a__s", sessionId: "telegram:1", workspace: "/w" });
      await store.recordTapeName({ tape: "a__s", sessionId: "later", workspace: "/elsewhere" });
      await store.append("a__s", entries.event("first"));
      await store.append("a__s", entries.event("second"));
    });
    assert.equal(statements, 2, "one statement per append, the name recorded in the first");
    assert.deepEqual(await reader.tapeNames(), [{ tape: "a__s", sessionId: "telegram:1", workspace: "/w" }]);
    // A name whose tape has no append here yet is written when the index is read, or on close.
    await store.recordTapeName({ tape: "b__s", sessionId: "telegram:2", workspace: "/w" });
    assert.deepEqual((await store.tapeNames()).map((name) => name.tape), ["a__s", "b__s"]);
    await store.recordTapeName({ tape: "c__s", sessionId: "telegram:3", workspace: "/w" });
    await store.close();
    assert.deepEqual((await reader.tapeNames()).map((name) => name.tape), ["a__s", "b__s", "c__s"]);
  });

  it("writes appends asked for together, of several tapes, in one statement, each with its own ids and name", async () => {
    const url = await freshUrl();
    await using store = createPostgresTapeStore({ url });
    await using reader = createPostgresTapeStore({ url });
    await store.append("a__s", entries.event("a0"));
    await store.recordTapeName({ tape: "b__s", sessionId: "telegram:2", workspace: "/w" });
    const { statements, result: stored } = await countStatements(() =>
      Promise.all([
        store.appendBatch("a__s", [entries.event("a1"), entries.event("a2")]),
        store.appendBatch("b__s", [entries.event("b1")]),
        store.append("a__s", entries.event("a3")).then((entry) => [entry]),
        store.appendBatch("c__s", [entries.event("c1"), entries.event("c2")]),
      ]),
    );
    assert.equal(statements, 1, "the four appends in one statement");
    assert.deepEqual(stored.map((batch) => batch.map((entry) => [entry.id, entry.payload.name])), [
      [[2, "a1"], [3, "a2"]],
      [[1, "b1"]],
      [[4, "a3"]],
      [[1, "c1"], [2, "c2"]],
    ]);
    for (const tape of ["a__s", "b__s", "c__s"]) {
      const read = await store.fetchAll({ tape });
      assert.deepEqual(read.map((entry) => entry.id), read.map((_, index) => index + 1), `${tape}: ids as told, no gap`);
    }
    assert.deepEqual(await reader.tapeNames(), [{ tape: "b__s", sessionId: "telegram:2", workspace: "/w" }], "the waiting name written with its tape's append");
  });

  it("merges a fork's entries, sidecars included, with fresh ids", async () => {
    await using store = createPostgresTapeStore({ url: await freshUrl() });
    await store.appendBatch(TAPE, [entries.anchor("session/start"), entries.event("before")]);
    const tape = createTape({ name: TAPE, store, archivePath: "/unused", sidecars: [{ name: "spill" }] });
    const fork = forkTape(tape);
    await fork.tape.appendEvent("in-fork", { n: 1 });
    await fork.store.append(`${TAPE}__sidecar__spill`, entries.event("chunk"));
    await store.append(TAPE, entries.event("meanwhile"));
    assert.equal(await fork.merge(), 2);
    const names = (await store.fetchAll({ tape: TAPE })).map((entry) => [entry.id, entry.payload.name]);
    assert.deepEqual(names, [[1, "session/start"], [2, "before"], [3, "meanwhile"], [4, "in-fork"]]);
    assert.equal((await store.fetchAll({ tape: `${TAPE}__sidecar__spill` })).length, 1);
    assert.deepEqual(await store.listTapes(), [TAPE]);
  });

  it("reads long tapes in pages: whole, after the last anchor, and text searches with a limit", async () => {
    await using store = createPostgresTapeStore({ url: await freshUrl() });
    const many = Array.from({ length: 5_000 }, (_, index) => (index === 4_000 ? entries.anchor("late") : entries.event(`e${index}`, { even: index % 2 === 0 })));
    await store.appendBatch(TAPE, many);
    const all = await store.fetchAll({ tape: TAPE });
    assert.equal(all.length, 5_000);
    assert.ok(all.every((entry, index) => entry.id === index + 1));
    assert.equal((await store.fetchAll({ tape: TAPE, lastAnchor: true })).length, 999);
    assert.deepEqual((await store.fetchAll({ tape: TAPE, text: '"e1', limit: 3 })).map((entry) => entry.payload.name), ["e1999", "e1998", "e1997"]);
    assert.equal((await store.fetchAll({ tape: TAPE, text: '"even": true' })).length, 2_499); // e4000 is the anchor
    assert.deepEqual((await store.fetchAll({ tape: TAPE, kinds: ["anchor"] })).map((entry) => entry.id), [4_001]);
  });

  it("fails with one line that names the server, never the password", async () => {
    const server = await postgres();
    const password = new URL(server.url()).password;
    await using wrong = createPostgresTapeStore({ url: server.url().replace(password, "not-the-password-123") });
    await assert.rejects(wrong.listTapes(), (error: Error) => {
      assert.match(error.message, /^PostgreSQL at 127\.0\.0\.1:\d+\/postgres refused the tape store \(.*\): fix the user, password or database in BUB_DATABASE_URL/);
      assert.doesNotMatch(error.message, /not-the-password-123/);
      return bubError("config", /./)(error);
    });
    const port = await freePort();
    await using down = createPostgresTapeStore({ url: `postgres://bub:hidden-password-1@127.0.0.1:${port}/bub` });
    await assert.rejects(down.append(TAPE, entries.event("x")), (error: Error) => {
      assert.equal(error.message.split("\n").length, 1);
      assert.doesNotMatch(error.message, /hidden-password-1/);
      return bubError("temporary", new RegExp(`^PostgreSQL at 127\\.0\\.0\\.1:${port}/bub is unreachable or busy .*: start it, or check BUB_DATABASE_URL, then retry\\.$`))(error);
    });
    const closed = createPostgresTapeStore({ url: server.url() });
    await closed.close();
    await assert.rejects(closed.listTapes(), bubError("invalid_input", /is closed/));
  });

  it("loads pg only when a PostgreSQL store is used", () => {
    const script = `
      import { registerHooks } from "node:module";
      const loaded = [];
      registerHooks({ resolve(specifier, context, next) { if (specifier === "pg") loaded.push(specifier); return next(specifier, context); } });
      const { createTapeStoreFromSettings } = await import("./src/tape/store-from-settings.ts");
      const home = process.env.HOME_DIR;
      await createTapeStoreFromSettings({ home }).listTapes();
      await createTapeStoreFromSettings({ kind: "sqlite", home }).close();
      const postgres = createTapeStoreFromSettings({ kind: "postgres", home, databaseUrl: process.env.URL });
      const before = loaded.length;
      await postgres.listTapes();
      await postgres.close();
      console.log(JSON.stringify({ before, after: loaded.length }));`;
    return postgres().then(async (server) => {
      const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: root, env: { ...process.env, HOME_DIR: tempDir("pg-lazy"), URL: await freshSchemaUrl(server) }, encoding: "utf8" });
      assert.deepEqual(JSON.parse(out.trim().split("\n").pop()!), { before: 0, after: 1 });
    });
  });
});
