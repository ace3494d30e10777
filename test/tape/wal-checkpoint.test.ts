// A WAL database checkpointed once its writes pause, not by SQLite inside a commit: what a
// checkpoint copies into the database file shows in the file's bytes, which hold nothing of
// a commit while it is only in the log.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, it } from "node:test";
import { openWalDatabase } from "../../src/tape/sqlite-open.ts";
import { BACKSTOP_PAGES, checkpointWhenQuiet } from "../../src/tape/wal-checkpoint.ts";
import { tempDir } from "./support/helpers.ts";

const QUIET_MS = 40;

function setup(afterCommits: number) {
  const path = join(tempDir("wal-checkpoint"), "db.sqlite3");
  const database = openWalDatabase(path, 1000, "CREATE TABLE IF NOT EXISTS t (v TEXT)", "NORMAL");
  const checkpoints = checkpointWhenQuiet(database, { afterCommits, quietMs: QUIET_MS });
  const insert = database.prepare("INSERT INTO t (v) VALUES (?)");
  return {
    database,
    checkpoints,
    /** Commits one row, as a store does, and tells the checkpoints. */
    commit(value: string) {
      insert.run(value);
      checkpoints.wrote();
    },
    /** Whether the database file itself (not its log) holds `value`. */
    inFile: (value: string) => readFileSync(path).includes(value),
  };
}

/** Whether `test` holds within a few seconds (a loaded machine may run timers late). */
async function soon(test: () => boolean): Promise<boolean> {
  for (const deadline = Date.now() + 5000; Date.now() < deadline; await sleep(QUIET_MS)) if (test()) return true;
  return test();
}

describe("checkpoints when writes pause", () => {
  it("leaves SQLite's own checkpoint to a far bound", () => {
    const { database, checkpoints } = setup(3);
    assert.equal(database.prepare("PRAGMA wal_autocheckpoint").get()?.wal_autocheckpoint, BACKSTOP_PAGES);
    checkpoints.close();
    database.close();
  });

  it("copies the log into the database file once enough commits were followed by a pause", async () => {
    const { database, checkpoints, commit, inFile } = setup(3);
    for (let index = 0; index < 3; index++) commit(`row-${index}-of-the-first-batch`);
    assert.equal(inFile("row-2-of-the-first-batch"), false, "a commit stays in the log");
    assert.equal(await soon(() => inFile("row-2-of-the-first-batch")), true, "checkpointed after the pause");
    checkpoints.close();
    database.close();
  });

  it("waits while commits keep coming, and for enough of them", async () => {
    const { database, checkpoints, commit, inFile } = setup(3);
    commit("a-lone-row");
    await sleep(QUIET_MS * 4);
    assert.equal(inFile("a-lone-row"), false, "fewer commits than the threshold: no checkpoint");
    // A commit every 5 ms for three pauses' worth of time, without yielding: the timer is due
    // when they stop, and finds the last commit too recent.
    let count = 0;
    for (const end = Date.now() + QUIET_MS * 3; Date.now() < end; ) {
      commit(`steady-row-${count++}`);
      for (const next = Date.now() + 5; Date.now() < next; );
    }
    await sleep(0);
    assert.equal(inFile("steady-row-0"), false, "no pause yet: no checkpoint");
    assert.equal(await soon(() => inFile(`steady-row-${count - 1}`)), true);
    checkpoints.close();
    database.close();
  });

  it("does nothing after it is closed", async () => {
    const { database, checkpoints, commit, inFile } = setup(1);
    commit("before-close");
    checkpoints.close();
    await sleep(QUIET_MS * 3);
    assert.equal(inFile("before-close"), false);
    database.close();
  });
});
