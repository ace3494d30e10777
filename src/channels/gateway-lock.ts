/**
 * One `bub gateway` per `BUB_HOME` (without `BUB_DATABASE_URL`): two would both poll the
 * bot (Telegram answers the second with 409 Conflict, or each message is answered twice),
 * both write the inbound journal, and both fire the schedules.
 *
 * The lock is an operating-system record lock (`fcntl`) on `<BUB_HOME>/gateway.lock`, taken
 * the way ../tape/process-lock.ts takes the tape lock: a SQLite write transaction
 * (`BEGIN IMMEDIATE`) on a database file that holds no data, kept open for as long as the
 * gateway runs. The kernel drops the lock the moment its process dies, `kill -9` included,
 * so a crashed gateway never leaves a stale lock. Who holds it is written next to it, in
 * `gateway.pid`, for the message only: the lock, not that file, decides. Taking the lock
 * (once, at start-up) uses synchronous calls; releasing it (at shutdown, while other work
 * may still be finishing) does not block the event loop.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { createPrivateFile, makeDirectory } from "../config/home-dir.ts";
import { errorMessage } from "../config/thrown.ts";
import { BubError } from "../kernel/errors.ts";
import { isSqliteBusy } from "../tape/values.ts";


/** The lock file and the file naming its holder, under a home. */
export function gatewayLockPaths(home: string): { lock: string; pid: string } {
  return { lock: join(home, "gateway.lock"), pid: join(home, "gateway.pid") };
}

/** The lock this process holds; {@link release} gives it up (the process's death does too). */
export interface GatewayLock {
  release(): Promise<void>;
}

/** What {@link tryGatewayLock} found: the lock, or the pid of the gateway holding it (null when unknown). */
export type GatewayLockTry = { held: GatewayLock } | { busy: { pid: number | null } };

/** The line `bub gateway` exits 1 with when another one holds `home`. */
export function gatewayBusyLine(home: string, pid: number | null): string {
  const holder = pid === null ? "" : ` (pid ${pid})`;
  return `bub: another bub gateway is running on ${home}${holder} — stop it first, or set BUB_DATABASE_URL to run several`;
}

function parsePid(text: string): number | null {
  const pid = Number.parseInt(text.trim(), 10);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
}

function readPid(path: string): number | null {
  try {
    return parsePid(readFileSync(path, "utf8"));
  } catch {
    return null;
  }
}

function lockFileError(path: string, error: unknown): BubError {
  return new BubError("config", `Cannot use the gateway lock file ${path} (${errorMessage(error)}): make BUB_HOME writable, or delete the file if it is not a SQLite file.`, {
    details: { path },
    cause: error,
  });
}

/**
 * Takes the gateway lock of `home` without waiting (see the module comment).
 * @throws BubError `config` when the lock file cannot be created or used.
 */
export function tryGatewayLock(home: string): GatewayLockTry {
  const paths = gatewayLockPaths(home);
  let database: DatabaseSync;
  try {
    makeDirectory(home);
    createPrivateFile(paths.lock);
    database = new DatabaseSync(paths.lock, { timeout: 0 });
  } catch (error) {
    throw lockFileError(paths.lock, error);
  }
  try {
    database.exec("BEGIN IMMEDIATE");
  } catch (error) {
    database.close();
    if (isSqliteBusy(error)) return { busy: { pid: readPid(paths.pid) } };
    throw lockFileError(paths.lock, error);
  }
  const pid = String(process.pid);
  try {
    writeFileSync(paths.pid, `${pid}\n`, { mode: 0o600 });
  } catch {
    // The pid only names the holder in another gateway's message.
  }
  let released = false;
  return {
    held: {
      async release() {
        if (released) return;
        released = true;
        try {
          // The pid file goes first: once the lock is free another gateway may write its own.
          const holder = await readFile(paths.pid, "utf8").then(parsePid, () => null);
          if (holder === process.pid) await rm(paths.pid, { force: true });
        } finally {
          if (database.isTransaction) database.exec("ROLLBACK");
          database.close();
        }
      },
    },
  };
}
