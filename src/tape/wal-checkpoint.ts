/**
 * When a WAL database bub writes on a busy path is checkpointed: once its writes pause.
 *
 * SQLite checkpoints a database by itself in the commit that takes its log past
 * `wal_autocheckpoint` pages (1,000 by default), and under `synchronous = NORMAL` that
 * checkpoint syncs the log before copying it into the database file and the database file
 * after, on the thread that commits; the first commit after the log starts over syncs the
 * log's header there too. For the connections that sync their log off the event loop
 * (./wal-sync.ts: the delivery ledger, the SQLite tape store), that put three syncs on the
 * event loop every 1,000 log pages, inside a message's commit. Here the bound is raised to
 * {@link BACKSTOP_PAGES}, and the connection checkpoints itself (`PASSIVE`, which never waits
 * for another process) once {@link QUIET_AFTER_COMMITS} commits were made since its last
 * checkpoint and none came for {@link QUIET_MS}. A busy gateway then pays for a checkpoint
 * when its writes pause, or at the backstop; a quiet one as often as before, between its
 * messages. SQLite's own syncs stay as they are, so a checkpoint promises what it did.
 * `journal_size_limit` cuts the log back to {@link LOG_LIMIT_BYTES} when it starts over.
 */
import type { DatabaseSync } from "node:sqlite";
import { createLogger } from "../kernel/log.ts";

const log = createLogger("bub:tape");

/** The log pages after which SQLite checkpoints in a commit all the same (about 40 MB). */
export const BACKSTOP_PAGES = 10_000;
/** Commits since the last checkpoint before a pause triggers one (about as many log pages as SQLite's default bound). */
export const QUIET_AFTER_COMMITS = 500;
/** How long writes must pause before the checkpoint. */
export const QUIET_MS = 1_000;
/** The size the log file is cut back to when it starts over. */
const LOG_LIMIT_BYTES = 4 * 1024 * 1024;

/** The checkpoints of one connection; see the module comment. */
export interface QuietCheckpoints {
  /** Call after each commit. */
  wrote(): void;
  /** Stops the timer (before the connection is closed). */
  close(): void;
}

/**
 * Takes over the checkpoints of `database` (a WAL connection): raises SQLite's own bound to
 * {@link BACKSTOP_PAGES} and checkpoints after a pause. `afterCommits` and `quietMs` default to
 * {@link QUIET_AFTER_COMMITS} and {@link QUIET_MS}.
 */
export function checkpointWhenQuiet(database: DatabaseSync, options: { afterCommits?: number; quietMs?: number } = {}): QuietCheckpoints {
  const afterCommits = options.afterCommits ?? QUIET_AFTER_COMMITS;
  const quietMs = options.quietMs ?? QUIET_MS;
  database.exec(`PRAGMA wal_autocheckpoint = ${BACKSTOP_PAGES}; PRAGMA journal_size_limit = ${LOG_LIMIT_BYTES};`);
  let commits = 0;
  let lastWrite = 0;
  let timer: NodeJS.Timeout | null = null;

  const arm = (ms: number) => {
    timer = setTimeout(check, ms);
    timer.unref();
  };
  function check(): void {
    timer = null;
    const quietFor = Date.now() - lastWrite;
    if (quietFor < quietMs) return arm(quietMs - quietFor);
    commits = 0;
    try {
      database.exec("PRAGMA wal_checkpoint(PASSIVE)");
    } catch (error) {
      // SQLite's backstop checkpoints all the same; the next pause tries again.
      log.warn("tape.wal_checkpoint failed", error);
    }
  }

  return {
    wrote() {
      commits++;
      lastWrite = Date.now();
      if (commits >= afterCommits && timer === null) arm(quietMs);
    },
    close() {
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}
