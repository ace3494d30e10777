/**
 * Durable commits of a WAL database without an `fsync` on the event loop.
 *
 * `node:sqlite` runs every statement on the calling thread, so with `synchronous = FULL` each
 * COMMIT waits for the disk right there, and a busy gateway stops serving while it does. A
 * database opened with `synchronous = NORMAL` commits into its write-ahead log (`<path>-wal`,
 * a name SQLite documents) without that wait: the commit survives the process being killed
 * at once, and is on the disk after the next `fdatasync` of the log. This module runs that
 * `fdatasync` on libuv's thread pool, shared by the commits made while one is running (group
 * commit), and a caller acknowledges a commit only after {@link WalSync.durable} resolves, so
 * it promises what `synchronous = FULL` promises.
 *
 * A checkpoint (which copies the log into the database file and may start the log over) syncs
 * both files itself under `synchronous = NORMAL`, so a commit it moved is durable already.
 * Those syncs, and the sync of the log's header when it starts over, run on the calling
 * thread, so the stores checkpoint when their writes pause (./wal-checkpoint.ts).
 */
import { open, type FileHandle } from "node:fs/promises";
import { createGroupCommit, type GroupCommit } from "./group-commit.ts";

/** The log sync of one database connection; close it with the connection. */
export interface WalSync {
  /** Resolves once every commit made before the call is on the disk. */
  durable(): Promise<void>;
  /** Waits for the syncs in flight and closes the log's descriptor. */
  close(): Promise<void>;
}

interface OpenLog {
  readonly handle: FileHandle;
  readonly commit: GroupCommit;
}

/** The {@link WalSync} of the WAL database at `databasePath` (its log exists once it has a commit). */
export function createWalSync(databasePath: string): WalSync {
  let log: Promise<OpenLog> | null = null;

  function opened(): Promise<OpenLog> {
    log ??= open(`${databasePath}-wal`, "r").then(
      (handle) => ({ handle, commit: createGroupCommit(handle.fd) }),
      (error: unknown) => {
        log = null;
        throw error;
      },
    );
    return log;
  }

  return {
    async durable() {
      const { commit } = await opened();
      await commit.flush(commit.noteWrite());
    },
    async close() {
      const pending = log;
      log = null;
      if (!pending) return;
      const { handle, commit } = await pending.catch(() => ({ handle: null, commit: null }));
      await commit?.idle();
      await handle?.close();
    },
  };
}
