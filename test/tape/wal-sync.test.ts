// The off-loop sync of a WAL database's log: commits are acknowledged after an fdatasync of
// `<path>-wal` run on the thread pool, so the connection itself runs `synchronous = NORMAL`.
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, it } from "node:test";
import { openWalDatabase } from "../../src/tape/sqlite-open.ts";
import { createWalSync } from "../../src/tape/wal-sync.ts";
import { createSqliteTapeStore } from "../../src/tape/sqlite-store.ts";
import { entries } from "../../src/tape/entry.ts";
import { tempDir } from "./support/helpers.ts";

describe("wal sync", () => {
  it("syncs the log of a database opened with synchronous = NORMAL, for every commit made before the call", async () => {
    const path = join(tempDir("wal-sync"), "db.sqlite3");
    const database = openWalDatabase(path, 1000, "CREATE TABLE IF NOT EXISTS t (v INTEGER)", "NORMAL");
    assert.equal(database.prepare("PRAGMA synchronous").get()?.synchronous, 1, "NORMAL: the commit itself does not wait for the disk");
    const sync = createWalSync(path);
    database.prepare("INSERT INTO t (v) VALUES (1)").run();
    // Calls made together share one sync; each resolves.
    await Promise.all([sync.durable(), sync.durable(), sync.durable()]);
    database.prepare("INSERT INTO t (v) VALUES (2)").run();
    await sync.durable();
    await sync.close();
    database.close();
    const reopened = new DatabaseSync(path);
    assert.deepEqual(reopened.prepare("SELECT v FROM t ORDER BY v").all().map((row) => row.v), [1, 2]);
    reopened.close();
  });

  it("fails a sync whose log cannot be opened, and opens it again on the next call", async () => {
    const path = join(tempDir("wal-sync"), "db.sqlite3");
    const sync = createWalSync(path);
    await assert.rejects(sync.durable(), { code: "ENOENT" }, "no log yet: nothing was committed in WAL mode");
    const database = openWalDatabase(path, 1000, "CREATE TABLE IF NOT EXISTS t (v INTEGER)", "NORMAL");
    database.prepare("INSERT INTO t (v) VALUES (1)").run();
    await sync.durable();
    await sync.close();
    database.close();
  });

  it("the SQLite tape store acknowledges an append after its sync, and it is there after a reopen", async () => {
    const path = join(tempDir("wal-sync"), "tapes.sqlite3");
    const store = createSqliteTapeStore({ path });
    const stored = await store.append("a__b", entries.anchor("start"));
    assert.equal(stored.id, 1);
    await store.close();
    const reopened = createSqliteTapeStore({ path });
    assert.deepEqual((await reopened.fetchAll({ tape: "a__b" })).map((entry) => entry.id), [1]);
    await reopened.close();
  });
});
