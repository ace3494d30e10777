/**
 * A lock shared by every process that writes one tapes directory.
 *
 * Node has no `flock`, and a lock file holding a pid goes stale when its owner is killed (or
 * looks alive when the pid is reused). SQLite's `BEGIN IMMEDIATE` takes an operating-system
 * record lock (`fcntl`) on a small database file instead; the kernel drops that lock the
 * moment its process dies, so a crashed writer can never leave the directory locked. The lock
 * database holds no data: every transaction is rolled back.
 */
import { dirname } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { createPrivateFileAsync, makeDirectoryAsync } from "../config/home-dir.ts";
import { BubError } from "../kernel/errors.ts";
import { fileStoreError } from "./store-errors.ts";
import { errorMessage } from "../config/thrown.ts";
import { isSqliteBusy, sqliteCode } from "./values.ts";

/** Mutual exclusion across processes (and across store objects of one process). */
export interface ProcessLock {
  /**
   * Runs `critical` while holding the lock and returns its result. Calls of one lock object
   * run one at a time, in the order made; `critical` may await (the lock is held until the
   * promise it returns settles), so keep it short: other processes wait for it.
   * @throws BubError `temporary` after waiting `timeoutMs` for another process.
   */
  run<T>(critical: () => T | Promise<T>): Promise<T>;
  /** Closes the lock database; a later `run` reopens it. */
  close(): void;
}

const SQLITE_READONLY = 8;
const SQLITE_CANTOPEN = 14;

function pause(attempt: number): Promise<void> {
  if (attempt < 4) return new Promise((resolve) => setImmediate(resolve));
  return new Promise((resolve) => setTimeout(resolve, Math.min(2 ** (attempt - 4), 20)));
}

/** A {@link ProcessLock} backed by the SQLite database file at `path` (created on first use). */
export function createProcessLock(path: string, options: { timeoutMs?: number } = {}): ProcessLock {
  const timeoutMs = options.timeoutMs ?? 30_000;
  let database: DatabaseSync | null = null;
  /** The last call of {@link ProcessLock.run} in this process; the next one starts after it. */
  let queue: Promise<unknown> = Promise.resolve();

  async function open(): Promise<DatabaseSync> {
    if (database) return database;
    try {
      await makeDirectoryAsync(dirname(path));
    } catch (error) {
      throw fileStoreError(error, "create the directory of", path);
    }
    try {
      await createPrivateFileAsync(path);
      // Opening the database file reads nothing: it is empty or holds one small schema.
      database = new DatabaseSync(path, { timeout: 0 });
    } catch (error) {
      throw new BubError(
        "config",
        `Cannot open the tape lock file ${path} (${errorMessage(error)}): make the tapes directory writable, or point BUB_HOME at a writable location.`,
        { details: { path }, cause: error },
      );
    }
    try {
      // Taking the lock costs ~80 µs on an empty database file and ~9 µs on one with a
      // schema; if another process is creating it right now, it will exist soon enough.
      // The file never holds data, so creating it needs no journal file and no fsync
      // (~1.5 ms of the first `bub run` in a new home); the lock is the same fcntl lock.
      database.exec("PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF; CREATE TABLE IF NOT EXISTS tape_lock (unused INTEGER)");
    } catch (error) {
      if (!isSqliteBusy(error)) {
        database.close();
        database = null;
        throw new BubError("config", `Cannot use the tape lock file ${path} (${errorMessage(error)}): delete it if it is not a SQLite file, or make it writable.`, {
          details: { path },
          cause: error,
        });
      }
    }
    return database;
  }

  /** The lock database inside a transaction that holds the lock, or null when another process holds it. */
  async function tryBegin(): Promise<DatabaseSync | null> {
    const db = database ?? (await open());
    if (db.isTransaction) db.exec("ROLLBACK");
    try {
      db.exec("BEGIN IMMEDIATE");
      return db;
    } catch (error) {
      if (isSqliteBusy(error)) return null;
      const code = sqliteCode(error);
      const kind = code === SQLITE_READONLY || code === SQLITE_CANTOPEN ? "config" : "unknown";
      throw new BubError(kind, `Cannot take the tape lock ${path} (${errorMessage(error)}): make the tapes directory and this file writable.`, {
        details: { path },
        cause: error,
      });
    }
  }

  async function hold<T>(critical: () => T | Promise<T>): Promise<T> {
    const started = Date.now();
    let locked = await tryBegin();
    for (let attempt = 0; locked === null; attempt++) {
      if (Date.now() - started > timeoutMs) {
        throw new BubError(
          "temporary",
          `Waited ${timeoutMs} ms for the tape lock ${path}: another process keeps writing this tapes directory. Retry, or stop the other bub process.`,
          { details: { path } },
        );
      }
      await pause(attempt);
      locked = await tryBegin();
    }
    try {
      return await critical();
    } finally {
      // Closing the database (store.close) meanwhile has released the lock already.
      if (locked.isOpen) locked.exec("ROLLBACK");
    }
  }

  return {
    run(critical) {
      const result = queue.then(() => hold(critical));
      queue = result.catch(() => undefined);
      return result;
    },
    close() {
      database?.close();
      database = null;
    },
  };
}
