// Choosing a store from settings (BUB_TAPE_STORE, BUB_TAPE_DSN, BUB_HOME).
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { entries } from "../../src/tape/entry.ts";
import { createTapeStoreFromSettings, sqlitePathFromDsn } from "../../src/tape/store-from-settings.ts";
import { bubError, tempDir } from "./support/helpers.ts";

describe("createTapeStoreFromSettings", () => {
  it("uses JSONL files in <home>/tapes by default", async () => {
    const home = tempDir("home");
    await using store = createTapeStoreFromSettings({ home });
    await store.append("a__b", entries.event("x"));
    assert.ok(existsSync(join(home, "tapes", "a__b.jsonl")));
    await using loose = createTapeStoreFromSettings({ kind: " FILE ", home });
    assert.deepEqual(await loose.listTapes(), ["a__b"]);
  });

  it("uses SQLite at the DSN or at <home>/tapes.sqlite3", async () => {
    const home = tempDir("home-sqlite");
    {
      await using store = createTapeStoreFromSettings({ kind: "sqlite", home, dsn: "" });
      await store.append("a__b", entries.event("x"));
    }
    assert.ok(existsSync(join(home, "tapes.sqlite3")));
    const dsn = join(home, "elsewhere", "bub.db");
    {
      await using store = createTapeStoreFromSettings({ kind: "sqlite", home, dsn: `sqlite:///${dsn}` });
      await store.append("a__b", entries.event("x"));
    }
    assert.ok(existsSync(dsn));
  });

  it("rejects an unknown store kind with what to do", () => {
    assert.throws(() => createTapeStoreFromSettings({ kind: "mysql", home: "/tmp" }), bubError("config", "BUB_TAPE_STORE must be 'file', 'sqlite' or 'postgres' (got \"mysql\"): fix the setting or unset it to use files."));
  });

  it("asks for BUB_DATABASE_URL for postgres, without showing a malformed one", () => {
    assert.throws(() => createTapeStoreFromSettings({ kind: "postgres", home: "/tmp" }), bubError("config", /^BUB_TAPE_STORE=postgres needs BUB_DATABASE_URL/));
    assert.throws(() => createTapeStoreFromSettings({ kind: "postgres", home: "/tmp", databaseUrl: "mysql://u:hunter2hunter2@h/db" }), (error: Error) => {
      assert.match(error.message, /^BUB_DATABASE_URL is not a postgres:\/\/ URL/);
      assert.doesNotMatch(error.message, /hunter2/);
      return true;
    });
  });

  it("reads SQLite DSNs as paths, SQLAlchemy URLs and file URLs", () => {
    assert.equal(sqlitePathFromDsn("/var/lib/bub/tapes.db"), "/var/lib/bub/tapes.db");
    assert.equal(sqlitePathFromDsn("relative.db"), resolve("relative.db"));
    assert.equal(sqlitePathFromDsn("~/bub.db"), join(homedir(), "bub.db"));
    assert.equal(sqlitePathFromDsn("sqlite:///relative.db"), resolve("relative.db"));
    assert.equal(sqlitePathFromDsn("sqlite:////abs/path%20x.db"), "/abs/path x.db");
    assert.equal(sqlitePathFromDsn("file:///abs/t.db?mode=rwc"), "/abs/t.db");
    assert.throws(() => sqlitePathFromDsn("sqlite://"), bubError("config", /names no file/));
  });
});
