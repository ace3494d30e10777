/**
 * Identity links in the SQLite database of `BUB_TAPE_STORE=sqlite` (its own table,
 * `identity_links`, one row holding the state as JSON). Changes run in a `BEGIN IMMEDIATE`
 * transaction, so processes on the same file take turns; reads are one indexed row.
 */
import type { DatabaseSync } from "node:sqlite";
import { errorMessage } from "../../config/thrown.ts";
import { BubError } from "../../kernel/errors.ts";
import { isSqliteBusy } from "../../tape/values.ts";
import { openWalDatabase } from "../../tape/sqlite-open.ts";
import { emptyLinkState, personOf, type LinkState } from "./codes.ts";
import { applyChange, parseLinkState, settle, type LinkStore } from "./store.ts";

const SCHEMA = "CREATE TABLE IF NOT EXISTS identity_links (id INTEGER PRIMARY KEY CHECK (id = 1), state TEXT NOT NULL)";

/** The {@link LinkStore} in the SQLite database file `path` (created, with its folder, on first use). */
export function createSqliteLinkStore(path: string, busyTimeoutMs = 5_000): LinkStore {
  let database: DatabaseSync | null = null;

  const failure = (error: unknown): BubError =>
    BubError.isInstance(error)
      ? error
      : isSqliteBusy(error)
        ? new BubError("temporary", `The links in ${path} are locked by another process (waited ${busyTimeoutMs} ms): retry, or stop the process holding the database.`, { cause: error })
        : new BubError("config", `The links in ${path} cannot be read or written (${errorMessage(error)}): make the database writable, or set BUB_TAPE_DSN to another file.`, { cause: error });

  function db(): DatabaseSync {
    if (database) return database;
    try {
      database = openWalDatabase(path, busyTimeoutMs, SCHEMA);
    } catch (error) {
      throw failure(error);
    }
    return database;
  }

  function read(): LinkState {
    const row = db().prepare("SELECT state FROM identity_links WHERE id = 1").get();
    return row === undefined ? emptyLinkState() : parseLinkState(row.state, `The identity_links table of ${path}`);
  }

  function guarded<T>(work: () => T): Promise<T> {
    try {
      return Promise.resolve(work());
    } catch (error) {
      return Promise.reject(failure(error));
    }
  }

  return {
    personOf: (identity) => guarded(() => personOf(read(), identity)),
    list: () => guarded(() => read().people),
    update(change) {
      return guarded(() => {
        const connection = db();
        connection.exec("BEGIN IMMEDIATE");
        try {
          const state = read();
          const outcome = applyChange(state, change);
          connection.prepare("INSERT INTO identity_links (id, state) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET state = excluded.state").run(JSON.stringify(state));
          connection.exec("COMMIT");
          return outcome;
        } catch (error) {
          if (connection.isTransaction) connection.exec("ROLLBACK");
          throw error;
        }
      }).then(settle);
    },
    async close() {
      database?.close();
      database = null;
    },
  };
}
