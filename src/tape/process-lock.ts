/**
 * A lock shared by every process that writes one tapes directory.
 *
 * Node has no `flock`, and a lock file holding a pid goes stale when its owner is killed (or
 * looks alive when the pid is reused). SQLite's `BEGIN IMMEDIATE` takes an operating-system
 * record lock (`fcntl`) on a small database file instead; the kernel drops that lock the
 * moment its process dies, so a crashed writer can never leave the directory locked. The lock
 * database holds no data: every transaction is rolled back.
 *
 * A lock may **linger** (`lingerMs`): a process that keeps writing (three calls within
 * `lingerMs`) keeps the lock between its calls instead of taking it for each one (a take is
 * about a dozen system calls), and lets go once no call came for `lingerMs`, or as soon as
 * another process waits. A waiting process says so by holding a read transaction on a
 * second small database, `<path>-wait`; the holder looks every `lingerMs` with `BEGIN
 * EXCLUSIVE`, which fails while anyone reads it. After letting go for a waiter, the holder
 * waits {@link YIELD_MS} before taking the lock again, longer than a waiter's longest pause
 * between tries, so the waiter gets it.
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
  /** Lets go of the lock and closes its databases; a later `run` reopens them. */
  close(): void;
}

/** Options of {@link createProcessLock}. */
export interface ProcessLockOptions {
  /** How long a call waits for another process holding the lock (default 30 s). */
  timeoutMs?: number;
  /**
   * Keep the lock between calls while they come often (three within this long): let go once
   * none came for this long, or once another process waits (it waits about this long at
   * most). Default 0: every call takes the lock and lets go of it.
   */
  lingerMs?: number;
}

const SQLITE_READONLY = 8;
const SQLITE_CANTOPEN = 14;

/**
 * A lock lingers once this many calls began within `lingerMs`: a busy writer keeps it, one
 * that writes now and then (an interactive `bub chat`, whose process Ctrl-Z may stop) takes
 * and releases it for each call.
 */
const BUSY_CALLS = 3;

/** The longest pause between two tries of a waiting process. */
const LONGEST_PAUSE_MS = 20;
/** How long a lingering holder stays away after letting go for a waiter: longer than its pause. */
const YIELD_MS = LONGEST_PAUSE_MS + 5;

function pause(attempt: number): Promise<void> {
  if (attempt < 4) return new Promise((resolve) => setImmediate(resolve));
  return sleep(Math.min(2 ** (attempt - 4), LONGEST_PAUSE_MS));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A {@link ProcessLock} backed by the SQLite database file at `path` (created on first use). */
export function createProcessLock(path: string, options: ProcessLockOptions = {}): ProcessLock {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const lingerMs = options.lingerMs ?? 0;
  let database: DatabaseSync | null = null;
  /** The database a waiting process reads to say it waits (lingering locks only). */
  let waitFlag: DatabaseSync | null = null;
  /** The last call of {@link ProcessLock.run} (or look at the lock) in this process; the next one starts after it. */
  let queue: Promise<unknown> = Promise.resolve();
  /** The lock is kept between calls (it lingers); `looks` checks every `lingerMs` whether to let go. */
  let kept = false;
  let looks: NodeJS.Timeout | null = null;
  let usedSinceLook = false;
  /** When this process last let go for a waiter. */
  let yieldedAt = -Infinity;
  /** When the last calls began, oldest first (at most {@link BUSY_CALLS}). */
  const starts: number[] = [];

  /** Opens (creating it) a lock database: empty but for one table, never written after. */
  async function openLockFile(file: string, table: string): Promise<DatabaseSync> {
    await createPrivateFileAsync(file);
    const opened = new DatabaseSync(file, { timeout: 0 });
    try {
      // Taking the lock costs ~80 µs on an empty database file and ~9 µs on one with a
      // schema; if another process is creating it right now, it will exist soon enough.
      // The file never holds data, so creating it needs no journal file and no fsync
      // (~1.5 ms of the first `bub run` in a new home); the lock is the same fcntl lock.
      opened.exec(`PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF; CREATE TABLE IF NOT EXISTS ${table} (unused INTEGER)`);
    } catch (error) {
      if (!isSqliteBusy(error)) {
        opened.close();
        throw new BubError("config", `Cannot use the tape lock file ${file} (${errorMessage(error)}): delete it if it is not a SQLite file, or make it writable.`, {
          details: { path: file },
          cause: error,
        });
      }
    }
    return opened;
  }

  async function open(): Promise<DatabaseSync> {
    if (database) return database;
    try {
      await makeDirectoryAsync(dirname(path));
    } catch (error) {
      throw fileStoreError(error, "create the directory of", path);
    }
    try {
      database = await openLockFile(path, "tape_lock");
    } catch (error) {
      if (error instanceof BubError) throw error;
      throw new BubError(
        "config",
        `Cannot open the tape lock file ${path} (${errorMessage(error)}): make the tapes directory writable, or point BUB_HOME at a writable location.`,
        { details: { path }, cause: error },
      );
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

  /** The flag database, opened (and created) on first use. */
  async function waitFlagDatabase(): Promise<DatabaseSync> {
    return (waitFlag ??= await openLockFile(`${path}-wait`, "waiting"));
  }

  function lowerWaitFlag(): void {
    if (waitFlag?.isTransaction) waitFlag.exec("ROLLBACK");
  }

  /** Says that this process waits (a read transaction on the flag database); retried on the next try when that fails. */
  async function raiseWaitFlag(): Promise<void> {
    try {
      const flag = await waitFlagDatabase();
      if (!flag.isTransaction) {
        flag.exec("BEGIN");
        flag.prepare("SELECT count(*) FROM waiting").get();
      }
    } catch {
      // The holder lets go once idle anyway; a flag that cannot be raised only makes it later.
      lowerWaitFlag();
    }
  }

  /** Whether another process waits for the lock: its read transaction on the flag database blocks `BEGIN EXCLUSIVE`. */
  async function othersWait(): Promise<boolean> {
    try {
      const flag = await waitFlagDatabase();
      flag.exec("BEGIN EXCLUSIVE");
      flag.exec("ROLLBACK");
      return false;
    } catch {
      // Busy: a process waits. Any other failure: one cannot tell, so let go as well.
      return true;
    }
  }

  /**
   * Takes the lock, waiting for other processes (and first for {@link YIELD_MS} after letting
   * go for one); `keep`: it lingers after this call.
   */
  async function take(keep: boolean): Promise<void> {
    const away = yieldedAt + YIELD_MS - Date.now();
    if (away > 0) await sleep(away);
    const started = Date.now();
    try {
      for (let attempt = 0; (await tryBegin()) === null; attempt++) {
        if (Date.now() - started > timeoutMs) {
          throw new BubError(
            "temporary",
            `Waited ${timeoutMs} ms for the tape lock ${path}: another process keeps writing this tapes directory. Retry, or stop the other bub process.`,
            { details: { path } },
          );
        }
        if (lingerMs > 0) await raiseWaitFlag();
        await pause(attempt);
      }
    } finally {
      lowerWaitFlag();
    }
    if (keep) {
      kept = true;
      looks = setInterval(() => void serial(look), lingerMs);
      looks.unref();
    }
  }

  /** Lets go of the lock (kept or taken for one call). */
  function letGo(): void {
    kept = false;
    if (looks) clearInterval(looks);
    looks = null;
    // Closing the database (close) meanwhile has let go already.
    if (database?.isOpen && database.isTransaction) database.exec("ROLLBACK");
  }

  /** Every `lingerMs` while the lock is kept: lets go when no call came since the last look, or when another process waits. */
  async function look(): Promise<void> {
    if (!kept) return;
    const used = usedSinceLook;
    usedSinceLook = false;
    if (!used) return letGo();
    if (await othersWait()) {
      yieldedAt = Date.now();
      letGo();
    }
  }

  /** Notes a call's start; true when the last {@link BUSY_CALLS} calls began within `lingerMs`. */
  function callsComeOften(): boolean {
    if (lingerMs <= 0) return false;
    const now = Date.now();
    starts.push(now);
    if (starts.length > BUSY_CALLS) starts.shift();
    return starts.length === BUSY_CALLS && now - starts[0] <= lingerMs;
  }

  async function hold<T>(critical: () => T | Promise<T>): Promise<T> {
    const often = callsComeOften();
    if (!kept) await take(often);
    usedSinceLook = true;
    try {
      return await critical();
    } finally {
      if (!kept) letGo();
    }
  }

  /** Runs `work` after every call and look before it. */
  function serial<T>(work: () => Promise<T>): Promise<T> {
    const result = queue.then(work);
    queue = result.catch(() => undefined);
    return result;
  }

  return {
    run: (critical) => serial(() => hold(critical)),
    close() {
      letGo();
      database?.close();
      database = null;
      waitFlag?.close();
      waitFlag = null;
    },
  };
}
