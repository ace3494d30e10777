import type { DatabaseSync, SQLOutputValue, StatementSync } from "node:sqlite";
import { createLogger } from "../kernel/log.ts";
import { BubError } from "../kernel/errors.ts";
import type { NewTapeEntry, TapeEntry, TapeNameRecord, TapeQuery, TapeStats, TapeStore } from "../kernel/tape-contract.ts";
import { utcNow } from "./date.ts";
import { recordedTapeNames } from "./recorded-names.ts";
import { onlyEntry, type EncodedAppendStore } from "./append-many.ts";
import { decodeEntry, encodeNewEntry, type EncodedEntry } from "./entry.ts";
import { anchorNotFound, anchorSliceOf, compileFilter, noAnchorsFound } from "./query-engine.ts";
import { isSidecarTapeName } from "./sidecar.ts";
import { errorMessage } from "../config/thrown.ts";
import { sqliteCode } from "./values.ts";
import { openWalDatabase } from "./sqlite-open.ts";
import { checkpointWhenQuiet, type QuietCheckpoints } from "./wal-checkpoint.ts";
import { createWalSync, type WalSync } from "./wal-sync.ts";

const log = createLogger("bub:tape");

/** Options of {@link createSqliteTapeStore}. */
export interface SqliteTapeStoreOptions {
  /** The database file (created, with its directory, on first use). */
  path: string;
  /** How long a statement waits for another process's write lock before failing (default 5,000 ms). */
  busyTimeoutMs?: number;
}

/** The SQLite store: a {@link TapeStore} with batch appends and a `close`. */
export interface SqliteTapeStore extends EncodedAppendStore, AsyncDisposable {
  /** The database file. */
  readonly path: string;
  appendBatch(tape: string, entries: readonly NewTapeEntry[]): Promise<TapeEntry[]>;
  close(): Promise<void>;
  /** The name index is the `tape_names` table. */
  recordTapeName(record: TapeNameRecord): Promise<void>;
  tapeNames(): Promise<TapeNameRecord[]>;
  /** One aggregate query; `bytes` is the length of the rows' JSON text. */
  tapeStats(): Promise<TapeStats[]>;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS tapes (
  name TEXT PRIMARY KEY,
  last_id INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS tape_entries (
  tape TEXT NOT NULL,
  id INTEGER NOT NULL,
  kind TEXT NOT NULL,
  anchor_name TEXT,
  payload TEXT NOT NULL,
  meta TEXT NOT NULL,
  date TEXT NOT NULL,
  PRIMARY KEY (tape, id)
);
CREATE INDEX IF NOT EXISTS tape_entries_kind ON tape_entries (tape, kind, id);
CREATE INDEX IF NOT EXISTS tape_entries_anchor ON tape_entries (tape, anchor_name, id) WHERE anchor_name IS NOT NULL;
CREATE TABLE IF NOT EXISTS tape_names (
  tape TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  workspace TEXT NOT NULL,
  date TEXT NOT NULL
);
`;

/**
 * Per tape: entries, newest date, text bytes, distinct turn ids, and turn-opening events
 * without a turn id (tapes written before turn ids; see src/tape/turns.ts).
 */
const STATS_SQL = `
SELECT tape,
  COUNT(*) AS entries,
  MAX(id) AS last_id,
  SUM(length(CAST(payload AS BLOB)) + length(CAST(meta AS BLOB)) + length(kind) + length(date)) AS bytes,
  COUNT(DISTINCT json_extract(meta, '$.turn_id')) AS turn_ids,
  SUM(CASE WHEN kind = 'event' AND json_extract(meta, '$.turn_id') IS NULL
    AND json_extract(payload, '$.name') IN ('loop.start', 'command') THEN 1 ELSE 0 END) AS legacy_turns
FROM tape_entries GROUP BY tape`;

const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
const SQLITE_READONLY = 8;
const SQLITE_FULL = 13;
const SQLITE_CANTOPEN = 14;
const SQLITE_CORRUPT = 11;
const SQLITE_NOTADB = 26;

function sqliteError(error: unknown, path: string, busyTimeoutMs: number): BubError {
  if (BubError.isInstance(error)) return error;
  const code = sqliteCode(error);
  const message = errorMessage(error);
  const options = { details: { path, sqlite: message }, cause: error };
  switch (code) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return new BubError(
        "temporary",
        `The tape database ${path} is locked by another process (waited ${busyTimeoutMs} ms). Retry, or stop the process holding it.`,
        options,
      );
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
      return new BubError("config", `Cannot write the tape database ${path} (${message}): make it and its directory writable, or set BUB_TAPE_DSN to another path.`, options);
    case SQLITE_FULL:
      return new BubError("temporary", `The disk holding the tape database ${path} is full: free some space and retry; stored entries are intact.`, options);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return new BubError("config", `${path} is not a usable SQLite database (${message}): point BUB_TAPE_DSN at another file.`, options);
    default:
      return new BubError("unknown", `Tape database ${path} failed: ${message}`, options);
  }
}

/** A row as `node:sqlite` reads it. */
type Row = Record<string, SQLOutputValue>;

/** An INTEGER column of a row, or undefined when the row or the value is missing. */
function integerColumn(row: Row | undefined, column: string): number | undefined {
  const value = row?.[column];
  return typeof value === "number" ? value : undefined;
}

/** A TEXT column of a row, or undefined when the row or the value is missing. */
function textColumn(row: Row | undefined, column: string): string | undefined {
  const value = row?.[column];
  return typeof value === "string" ? value : undefined;
}

/**
 * A tape store in one SQLite database file (`node:sqlite`), in WAL mode. An append is
 * acknowledged once its commit is on the disk, synced off the event loop (`wal-sync.ts`), so
 * every acknowledged append survives a crash or a power loss; the database is checkpointed
 * when appends pause (`wal-checkpoint.ts`). Several processes may
 * share the file: an append is one `BEGIN IMMEDIATE` transaction that reads the tape's last
 * id and inserts after it; a process that finds the database locked waits `busyTimeoutMs`,
 * then fails with a clear error.
 *
 * ```ts
 * const store = createSqliteTapeStore({ path: join(home, "tapes.sqlite3") });
 * ```
 */
export function createSqliteTapeStore(options: SqliteTapeStoreOptions): SqliteTapeStore {
  const { path } = options;
  const busyTimeoutMs = options.busyTimeoutMs ?? 5_000;
  let database: DatabaseSync | null = null;
  let walSync: WalSync | null = null;
  let checkpoints: QuietCheckpoints | null = null;
  const statements = new Map<string, StatementSync>();
  /** Tapes this process put in the name index already (an insert is a durable write); bounded. */
  const recorded = recordedTapeNames();

  function db(): DatabaseSync {
    if (database) return database;
    try {
      database = openWalDatabase(path, busyTimeoutMs, SCHEMA, "NORMAL");
    } catch (error) {
      throw sqliteError(error, path, busyTimeoutMs);
    }
    walSync = createWalSync(path);
    checkpoints = checkpointWhenQuiet(database);
    return database;
  }

  function statement(sql: string): StatementSync {
    let prepared = statements.get(sql);
    if (!prepared) statements.set(sql, (prepared = db().prepare(sql)));
    return prepared;
  }

  function guarded<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      throw sqliteError(error, path, busyTimeoutMs);
    }
  }

  function transaction<T>(work: () => T): T {
    return guarded(() => {
      db().exec("BEGIN IMMEDIATE");
      try {
        const result = work();
        db().exec("COMMIT");
        checkpoints?.wrote();
        return result;
      } catch (error) {
        if (db().isTransaction) db().exec("ROLLBACK");
        throw error;
      }
    });
  }

  function anchorId(tape: string, name: string | null, after = 0, first = false): number | undefined {
    const where = name === null ? "kind = 'anchor'" : "anchor_name = ?";
    const sql = `SELECT id FROM tape_entries WHERE tape = ? AND ${where} AND id > ? ORDER BY id ${first ? "ASC" : "DESC"} LIMIT 1`;
    return integerColumn(name === null ? statement(sql).get(tape, after) : statement(sql).get(tape, name, after), "id");
  }

  function toEntry(row: Row): TapeEntry | undefined {
    const { id, kind, payload, meta, date } = row;
    let value: unknown;
    try {
      if (typeof payload === "string" && typeof meta === "string") value = { id, kind, payload: JSON.parse(payload), meta: JSON.parse(meta), date };
    } catch {
      value = undefined;
    }
    const entry = value === undefined ? "not valid JSON" : decodeEntry(value);
    if (typeof entry === "string") {
      log.warn(`tape.row_skipped database=${path} id=${String(id)} reason=${entry}`);
      return undefined;
    }
    return entry;
  }

  function fetch(query: TapeQuery): TapeEntry[] {
    const slice = anchorSliceOf(query);
    let lower = 0;
    let upper = Number.MAX_SAFE_INTEGER;
    if (slice.mode === "last") {
      const id = anchorId(query.tape, null);
      if (id === undefined) throw noAnchorsFound();
      lower = id;
    } else if (slice.mode === "after") {
      const id = anchorId(query.tape, slice.name);
      if (id === undefined) throw anchorNotFound(slice.name);
      lower = id;
    } else if (slice.mode === "between") {
      const start = anchorId(query.tape, slice.start);
      if (start === undefined) throw anchorNotFound(slice.start);
      const end = anchorId(query.tape, slice.end, start, true);
      if (end === undefined) throw anchorNotFound(slice.end);
      lower = start;
      upper = end;
    }
    const filter = compileFilter(query);
    if (filter.afterId !== undefined) lower = Math.max(lower, filter.afterId);
    const limit = filter.limit ?? Infinity;
    if (limit === 0) return [];
    const kinds = query.kinds && query.kinds.length > 0 ? [...new Set(query.kinds)] : [];
    const kindClause = kinds.length > 0 ? ` AND kind IN (${kinds.map(() => "?").join(", ")})` : "";
    const order = filter.newestFirst ? "DESC" : "ASC";
    const sql = `SELECT id, kind, payload, meta, date FROM tape_entries WHERE tape = ? AND id > ? AND id < ?${kindClause} ORDER BY id ${order}`;
    const found: TapeEntry[] = [];
    for (const row of statement(sql).iterate(query.tape, lower, upper, ...kinds)) {
      const entry = toEntry(row);
      if (entry && filter.matches(entry)) found.push(entry);
      if (found.length >= limit) break;
    }
    return found;
  }

  /** Resolves once the commits made so far are on the disk. */
  async function durable(): Promise<void> {
    try {
      await walSync?.durable();
    } catch (error) {
      throw new BubError("temporary", `Cannot sync the tape database ${path} to disk (${errorMessage(error)}): the last append may be lost; check the disk and retry.`, { cause: error });
    }
  }

  async function appendRows(tape: string, encoded: readonly EncodedEntry[]): Promise<TapeEntry[]> {
    if (encoded.length === 0) return [];
    const stored = transaction(() => {
      const lastId = integerColumn(statement("SELECT last_id FROM tapes WHERE name = ?").get(tape), "last_id") ?? 0;
      const insert = statement("INSERT INTO tape_entries (tape, id, kind, anchor_name, payload, meta, date) VALUES (?, ?, ?, ?, ?, ?, ?)");
      const stored = encoded.map(({ value, payloadJson, metaJson }, index): TapeEntry => {
        const id = lastId + index + 1;
        const anchorName = value.kind === "anchor" && typeof value.payload.name === "string" ? value.payload.name : null;
        insert.run(tape, id, value.kind, anchorName, payloadJson, metaJson, value.date);
        return { id, ...value };
      });
      statement("INSERT INTO tapes (name, last_id) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET last_id = excluded.last_id").run(
        tape,
        lastId + stored.length,
      );
      return stored;
    });
    await durable();
    return stored;
  }

  /** Encodes `batch` and appends it; an entry that cannot be encoded rejects the call. */
  async function appendBatch(tape: string, batch: readonly NewTapeEntry[]): Promise<TapeEntry[]> {
    return appendRows(tape, batch.map(encodeNewEntry));
  }

  return {
    path,
    async listTapes() {
      const names: string[] = [];
      for (const row of guarded(() => statement("SELECT name FROM tapes").all())) {
        const name = textColumn(row, "name");
        if (name !== undefined && !isSidecarTapeName(name)) names.push(name);
      }
      return names.sort();
    },
    async fetchAll(query) {
      return guarded(() => fetch(query));
    },
    async append(tape, entry) {
      return onlyEntry(await appendBatch(tape, [entry]));
    },
    appendBatch,
    appendEncoded: appendRows,
    async recordTapeName(record) {
      if (recorded.has(record.tape)) return;
      guarded(() =>
        statement("INSERT OR IGNORE INTO tape_names (tape, session_id, workspace, date) VALUES (?, ?, ?, ?)").run(record.tape, record.sessionId, record.workspace, utcNow()),
      );
      await durable();
      recorded.add(record.tape);
    },
    async tapeNames() {
      const rows = guarded(() => statement("SELECT tape, session_id, workspace FROM tape_names ORDER BY tape").all());
      const records: TapeNameRecord[] = [];
      for (const row of rows) {
        const [tape, sessionId, workspace] = [textColumn(row, "tape"), textColumn(row, "session_id"), textColumn(row, "workspace")];
        if (tape !== undefined && sessionId !== undefined && workspace !== undefined) records.push({ tape, sessionId, workspace });
      }
      return records;
    },
    async tapeStats() {
      const rows = guarded(() => statement(STATS_SQL).all());
      const dates = statement("SELECT date FROM tape_entries WHERE tape = ? AND id = ?");
      const stats: TapeStats[] = [];
      for (const row of rows) {
        const tape = textColumn(row, "tape");
        if (tape === undefined || isSidecarTapeName(tape)) continue;
        const lastId = integerColumn(row, "last_id");
        stats.push({
          tape,
          entries: integerColumn(row, "entries") ?? 0,
          turns: (integerColumn(row, "turn_ids") ?? 0) + (integerColumn(row, "legacy_turns") ?? 0),
          lastDate: lastId === undefined ? null : (textColumn(dates.get(tape, lastId), "date") ?? null),
          bytes: integerColumn(row, "bytes") ?? 0,
        });
      }
      return stats.sort((a, b) => (a.tape < b.tape ? -1 : a.tape > b.tape ? 1 : 0));
    },
    async reset(tape) {
      transaction(() => {
        statement("DELETE FROM tape_entries WHERE tape = ?").run(tape);
        statement("DELETE FROM tapes WHERE name = ?").run(tape);
      });
      await durable();
    },
    close,
    [Symbol.asyncDispose]: close,
  };

  async function close(): Promise<void> {
    statements.clear();
    checkpoints?.close();
    checkpoints = null;
    const sync = walSync;
    walSync = null;
    await sync?.close();
    database?.close();
    database = null;
  }
}
