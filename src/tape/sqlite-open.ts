/** Opening a SQLite database bub keeps under its home: owner-only, WAL, its schema applied. */
import { dirname } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { createPrivateFile, makeDirectory } from "../config/home-dir.ts";
import { isSqliteBusy } from "./values.ts";

const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/**
 * Opens the database at `path` (created owner-only first, so its -wal and -shm files take the
 * same mode), in WAL mode with `synchronous = FULL` (or `NORMAL` for a caller that syncs the
 * log itself, see `wal-sync.ts`), and runs `schema`. Switching a new file
 * to WAL takes an exclusive lock SQLite's busy handler does not wait for, so a second process
 * opening the same new database at that moment fails at once: the setup is retried within
 * `busyTimeoutMs` (a short blocking pause: callers' APIs are synchronous here).
 * @throws the driver's error once it is not a busy one, or the time is up.
 */
export function openWalDatabase(path: string, busyTimeoutMs: number, schema: string, synchronous: "FULL" | "NORMAL" = "FULL"): DatabaseSync {
  const deadline = Date.now() + busyTimeoutMs;
  for (;;) {
    let database: DatabaseSync | null = null;
    try {
      makeDirectory(dirname(path));
      createPrivateFile(path);
      database = new DatabaseSync(path, { timeout: busyTimeoutMs });
      database.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = ${synchronous};`);
      database.exec(schema);
      return database;
    } catch (error) {
      database?.close();
      if (!isSqliteBusy(error) || Date.now() >= deadline) throw error;
      Atomics.wait(PAUSE, 0, 0, 5);
    }
  }
}
