/**
 * `createPostgresTapeStore`: the PostgreSQL tape store behind a thin front that loads the
 * store and the `pg` driver (`import()`) on its first call, so merely configuring or
 * importing it costs nothing and file or SQLite users never load `pg`.
 */
import { BubError } from "../../kernel/errors.ts";
import type { NewTapeEntry, TapeEntry, TapeNameRecord, TapeStats, TapeStore } from "../../kernel/tape-contract.ts";
import { errorMessage } from "../../config/thrown.ts";
import { describeDatabaseUrl } from "./errors.ts";
import type { EncodedAppendStore } from "../append-many.ts";

/** Options of {@link createPostgresTapeStore}. */
export interface PostgresTapeStoreOptions {
  /** `postgres://user:password@host:port/database` (`BUB_DATABASE_URL`). */
  url: string;
  /** Connections the store's pool opens at most (default 10). */
  maxConnections?: number;
  /** How long to wait for a connection before failing (default 10,000 ms). */
  connectTimeoutMs?: number;
}

/** The PostgreSQL store: a {@link TapeStore} with batch appends, the name index, stats and a `close`. */
export interface PostgresTapeStore extends EncodedAppendStore, AsyncDisposable {
  /** Where the tapes are, without credentials: `host:port/database`. */
  readonly database: string;
  appendBatch(tape: string, entries: readonly NewTapeEntry[]): Promise<TapeEntry[]>;
  close(): Promise<void>;
  /** The name index is the `bub_tape_names` table. */
  recordTapeName(record: TapeNameRecord): Promise<void>;
  tapeNames(): Promise<TapeNameRecord[]>;
  /** One aggregate query; `bytes` is the length of the rows' JSON text. */
  tapeStats(): Promise<TapeStats[]>;
}

/**
 * Checks a `BUB_DATABASE_URL` and answers it trimmed.
 * @throws BubError `config` when it is empty or not a `postgres://` / `postgresql://` URL (the message never shows it).
 */
export function checkDatabaseUrl(url: string | null | undefined): string {
  const trimmed = (url ?? "").trim();
  if (trimmed === "") {
    throw new BubError("config", "BUB_TAPE_STORE=postgres needs BUB_DATABASE_URL: set it to postgres://user:password@host:5432/database.");
  }
  let protocol = "";
  try {
    protocol = new URL(trimmed).protocol;
  } catch {
    // reported below
  }
  if (protocol !== "postgres:" && protocol !== "postgresql:") {
    throw new BubError("config", "BUB_DATABASE_URL is not a postgres:// URL: set it to postgres://user:password@host:5432/database.");
  }
  return trimmed;
}

/**
 * A tape store in a PostgreSQL database, shared safely by any number of processes: ids are
 * assigned under a per-tape row lock, the schema is migrated on first use under an advisory
 * lock. Nothing connects until the first call.
 * @throws BubError `config` for a missing or malformed URL.
 *
 * ```ts
 * await using store = createPostgresTapeStore({ url: process.env.BUB_DATABASE_URL! });
 * ```
 */
export function createPostgresTapeStore(options: PostgresTapeStoreOptions): PostgresTapeStore {
  const settings = { ...options, url: checkDatabaseUrl(options.url) };
  const database = describeDatabaseUrl(settings.url);
  let loading: Promise<PostgresTapeStore> | null = null;
  let closed = false;
  /** Calls under way: `close` lets them finish (the tapes service records names in the background). */
  const pending = new Set<Promise<unknown>>();
  const store = (): Promise<PostgresTapeStore> => {
    if (closed) return Promise.reject(new BubError("invalid_input", `The tape store for ${database} is closed: open a new one.`));
    loading ??= import("./store.ts").then(
      (module) => module.openPostgresTapeStore(settings),
      (error: unknown) => {
        loading = null;
        throw new BubError("config", `The PostgreSQL tape store could not load its driver (${errorMessage(error)}): reinstall bub-ts so that its 'pg' dependency is present.`, { cause: error });
      },
    );
    return loading;
  };
  const call = <T>(work: (real: PostgresTapeStore) => Promise<T>): Promise<T> => {
    const running = store().then(work);
    pending.add(running);
    void running.then(
      () => pending.delete(running),
      () => pending.delete(running),
    );
    return running;
  };
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await Promise.allSettled([...pending]);
    if (loading) await (await loading.catch(() => null))?.close();
  };
  return {
    database,
    listTapes: () => call((real) => real.listTapes()),
    fetchAll: (query) => call((real) => real.fetchAll(query)),
    append: (tape, entry) => call((real) => real.append(tape, entry)),
    appendBatch: (tape, entries) => call((real) => real.appendBatch(tape, entries)),
    appendEncoded: (tape, encoded) => call((real) => real.appendEncoded(tape, encoded)),
    reset: (tape) => call((real) => real.reset(tape)),
    recordTapeName: (record) => call((real) => real.recordTapeName(record)),
    tapeNames: () => call((real) => real.tapeNames()),
    tapeStats: () => call((real) => real.tapeStats()),
    close,
    [Symbol.asyncDispose]: close,
  };
}
