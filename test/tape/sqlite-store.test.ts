// The SQLite store beyond the shared contract: its schema, a locked database, foreign files and rows.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, it } from "node:test";
import { entries } from "../../src/tape/entry.ts";
import { createSqliteTapeStore } from "../../src/tape/sqlite-store.ts";
import { bubError, captureLogs, tempDir } from "./support/helpers.ts";

const TAPE = "3333__4444";

describe("sqlite store", () => {
  it("creates one WAL database with indexes for (tape, id), kind and anchor name", async () => {
    const path = join(tempDir("sqlite"), "sub", "tapes.sqlite3");
    const store = createSqliteTapeStore({ path });
    await store.append(TAPE, entries.anchor("start"));
    await store.close();
    const db = new DatabaseSync(path);
    assert.equal((db.prepare("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode, "wal");
    const indexes = (db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index'").all() as { name: string; sql: string | null }[]).map((row) => row.sql ?? row.name).join("\n");
    assert.match(indexes, /sqlite_autoindex_tape_entries/);
    assert.match(indexes, /\(tape, kind, id\)/);
    assert.match(indexes, /\(tape, anchor_name, id\)/);
    const row = db.prepare("SELECT tape, id, kind, anchor_name, payload, meta FROM tape_entries").get() as Record<string, unknown>;
    assert.deepEqual({ ...row }, { tape: TAPE, id: 1, kind: "anchor", anchor_name: "start", payload: '{"name":"start"}', meta: "{}" });
    db.close();
  });

  it("waits for a locked database, then fails with a clear error, and works once it is free", async () => {
    const path = join(tempDir("sqlite-lock"), "tapes.sqlite3");
    const store = createSqliteTapeStore({ path, busyTimeoutMs: 50 });
    await store.append(TAPE, entries.event("before"));
    const other = new DatabaseSync(path);
    other.exec("BEGIN IMMEDIATE");
    try {
      await assert.rejects(store.append(TAPE, entries.event("blocked")), bubError("temporary", /is locked by another process \(waited 50 ms\)/));
      assert.equal((await store.fetchAll({ tape: TAPE })).length, 1, "readers are not blocked in WAL mode");
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
    assert.equal((await store.append(TAPE, entries.event("after"))).id, 2);
    await store.close();
  });

  it("names a file that is not a database and says what to do", async () => {
    const path = join(tempDir("sqlite-foreign"), "tapes.sqlite3");
    writeFileSync(path, "this is not a database, just text that is long enough to have a header".repeat(20));
    const store = createSqliteTapeStore({ path });
    await assert.rejects(store.listTapes(), bubError("config", /is not a usable SQLite database .*point BUB_TAPE_DSN at another file/));
  });

  it("skips rows whose JSON was damaged by another writer, with a warning", async () => {
    const path = join(tempDir("sqlite-rows"), "tapes.sqlite3");
    const store = createSqliteTapeStore({ path });
    await store.appendBatch(TAPE, [entries.event("one"), entries.event("two"), entries.event("three")]);
    const db = new DatabaseSync(path);
    db.prepare("UPDATE tape_entries SET payload = '{broken' WHERE id = 2").run();
    db.prepare("UPDATE tape_entries SET payload = '[1]' WHERE id = 3").run();
    db.close();
    const logs = captureLogs();
    try {
      assert.deepEqual((await store.fetchAll({ tape: TAPE })).map((entry) => entry.id), [1]);
      assert.deepEqual(logs.records.map((record) => record.message), [
        `tape.row_skipped database=${path} id=2 reason=not valid JSON`,
        `tape.row_skipped database=${path} id=3 reason=payload is not an object`,
      ]);
    } finally {
      logs.restore();
    }
    assert.equal((await store.append(TAPE, entries.event("four"))).id, 4);
    await store.close();
  });

  it("keeps ids increasing across store objects on one file and after reopening", async () => {
    const path = join(tempDir("sqlite-ids"), "tapes.sqlite3");
    const first = createSqliteTapeStore({ path });
    const second = createSqliteTapeStore({ path });
    await Promise.all([first.append(TAPE, entries.event("a")), second.append(TAPE, entries.event("b")), first.append(TAPE, entries.event("c"))]);
    await first.close();
    const reopened = createSqliteTapeStore({ path });
    assert.equal((await reopened.append(TAPE, entries.event("d"))).id, 4);
    assert.deepEqual((await second.fetchAll({ tape: TAPE })).map((entry) => entry.id), [1, 2, 3, 4]);
    await Promise.all([second.close(), reopened.close()]);
  });
});
