// What bub creates under BUB_HOME is the owner's alone whatever the umask; what it creates in
// a workspace (fs.write's parent folders) keeps the umask's usual modes.
import assert from "node:assert/strict";
import { statSync, writeFileSync, chmodSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createPrivateFile, makeDirectory, makeDirectoryAsync, SHARED_DIRECTORY_MODE } from "../../src/config/home-dir.ts";
import { tempDir } from "../support/temp.ts";
import { entries } from "../../src/tape/entry.ts";
import { createFileTapeStore } from "../../src/tape/file-store.ts";
import { createSqliteTapeStore } from "../../src/tape/sqlite-store.ts";

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe("private folders and files (umask 022)", () => {
  let temp: { path: string; cleanup: () => Promise<void> };
  let umask = 0;
  before(async () => {
    umask = process.umask(0o022);
    temp = await tempDir("bub-private-");
  });
  after(async () => {
    process.umask(umask);
    await temp.cleanup();
  });

  it("creates every missing level 0700, sync and async, and leaves an existing folder as it is", async () => {
    makeDirectory(join(temp.path, "a", "b"));
    await makeDirectoryAsync(join(temp.path, "c", "d"));
    for (const path of ["a", "a/b", "c", "c/d"]) assert.equal(modeOf(join(temp.path, path)), 0o700, path);
    assert.equal(modeOf(temp.path), 0o700, "the temporary folder itself (mkdtemp)");
    chmodSync(join(temp.path, "a"), 0o755);
    makeDirectory(join(temp.path, "a", "e"));
    assert.equal(modeOf(join(temp.path, "a")), 0o755, "an existing folder is not changed");
  });

  it("creates workspace folders with the umask's mode when asked to", async () => {
    await makeDirectoryAsync(join(temp.path, "work", "sub"), SHARED_DIRECTORY_MODE);
    assert.equal(modeOf(join(temp.path, "work", "sub")), 0o755);
  });

  it("creates an empty file 0600 and leaves an existing one untouched", () => {
    const fresh = join(temp.path, "fresh.sqlite3");
    createPrivateFile(fresh);
    assert.equal(modeOf(fresh), 0o600);
    assert.equal(statSync(fresh).size, 0);
    const existing = join(temp.path, "existing.sqlite3");
    writeFileSync(existing, "data", { mode: 0o444 });
    createPrivateFile(existing);
    assert.equal(modeOf(existing), 0o444);
    assert.equal(statSync(existing).size, 4);
  });

  it("writes tapes, the lock and a SQLite database with its -wal and -shm files 0600", async () => {
    const files = createFileTapeStore({ directory: join(temp.path, "home", "tapes") });
    await files.append("1111__2222", entries.event("hello"));
    const sqlitePath = join(temp.path, "home", "tapes.sqlite3");
    const sqlite = createSqliteTapeStore({ path: sqlitePath });
    try {
      await sqlite.append("1111__2222", entries.event("hello"));
      // While the database is open its WAL and shared-memory files exist.
      for (const path of [sqlitePath, `${sqlitePath}-wal`, `${sqlitePath}-shm`]) assert.equal(modeOf(path), 0o600, path);
    } finally {
      await sqlite.close();
    }
    assert.equal(modeOf(join(temp.path, "home")), 0o700);
    assert.equal(modeOf(join(temp.path, "home", "tapes")), 0o700);
    for (const name of ["1111__2222.jsonl", ".tapes.lock"]) assert.equal(modeOf(join(temp.path, "home", "tapes", name)), 0o600, name);
  });
});
