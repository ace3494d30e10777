/**
 * The PostgreSQL tape store proper. Loaded only through `./lazy-store.ts`, so `pg` is never
 * imported by processes that keep their tapes in files or SQLite.
 */
import pg from "pg";
import { createLogger } from "../../kernel/log.ts";
import { errorMessage } from "../../config/thrown.ts";
import type { NewTapeEntry, TapeEntry, TapeNameRecord, TapeQuery, TapeStats } from "../../kernel/tape-contract.ts";
import { utcNow } from "../date.ts";
import { recordedTapeNames } from "../recorded-names.ts";
import { onlyEntry } from "../append-many.ts";
import { decodeEntry, encodeNewEntry, type EncodedEntry } from "../entry.ts";
import { anchorNotFound, anchorSliceOf, compileFilter, noAnchorsFound } from "../query-engine.ts";
import { isSidecarTapeName } from "../sidecar.ts";
import { describeDatabaseUrl, postgresError } from "./errors.ts";
import type { PostgresTapeStore, PostgresTapeStoreOptions } from "./lazy-store.ts";
import { migrate } from "./schema.ts";
import { namedStatement, type NamedStatement } from "./named.ts";
import { APPEND_MANY_SQL, APPEND_NAMED_SQL, APPEND_SQL, appendManyValues, entryColumns, firstIds, type Append, type PendingName } from "./append.ts";
import { coalescing } from "./coalesce.ts";

const log = createLogger("bub:tape");

/** Rows read per query while scanning a slice (keyset pages, so memory stays bounded). */
const PAGE = 2_000;

/** Appends written in one statement at most. */
const MAX_APPENDS = 64;

/** The names waiting for their tape's first append: written on their own past this many. */
const MAX_PENDING_NAMES = 1024;

/** Several names in one statement ($1 tapes, $2 sessions, $3 workspaces, $4 dates); a name recorded before stays as it was. */
const NAMES_SQL = `INSERT INTO bub_tape_names (tape, session_id, workspace, date)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) ON CONFLICT (tape) DO NOTHING`;

/** Per tape: entries, newest id and date, text bytes, turns (distinct turn ids plus turn-opening events without one; see src/tape/turns.ts). */
const STATS_SQL = `
SELECT tape,
  count(*) AS entries,
  sum(octet_length(payload::text) + octet_length(meta::text) + octet_length(kind) + octet_length(date)) AS bytes,
  count(DISTINCT meta->>'turn_id') AS turn_ids,
  sum(CASE WHEN kind = 'event' AND meta->>'turn_id' IS NULL AND payload->>'name' IN ('loop.start', 'command') THEN 1 ELSE 0 END) AS legacy_turns,
  (array_agg(date ORDER BY id DESC))[1] AS last_date
FROM bub_tape_entries GROUP BY tape`;

interface EntryRow {
  id: string;
  kind: string;
  payload: unknown;
  meta: unknown;
  date: string;
}

/** The store over a connection pool; the schema is migrated before the first query. */
export function openPostgresTapeStore(options: PostgresTapeStoreOptions): PostgresTapeStore {
  const { url } = options;
  const database = describeDatabaseUrl(url);
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 10,
    application_name: "bub tapes",
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    // Idle connections never keep a process alive (a command that forgot close() still exits).
    allowExitOnIdle: true,
  });
  // An idle connection the server drops (restart, failover) must not crash the process.
  pool.on("error", (error) => log.warn(`tape.postgres_connection_lost database=${database} reason=${postgresError(error, url).message}`));
  const recorded = recordedTapeNames();
  /**
   * Names recorded here whose tape has had no append from this process yet: each goes into
   * the name index with that append (one statement instead of two), or with the others when
   * the index is read here, when too many wait, or on close.
   */
  const pendingNames = new Map<string, PendingName>();
  let ready: Promise<void> | null = null;
  let closed = false;

  function prepare(): Promise<void> {
    ready ??= (async () => {
      const client = await pool.connect();
      try {
        const applied = await migrate(client);
        if (applied.length > 0) log.info(`tape.postgres_migrated database=${database} versions=${applied.join(",")}`);
      } finally {
        client.release();
      }
    })().catch((error: unknown) => {
      ready = null; // the next call tries again
      throw error;
    });
    return ready;
  }

  /** Each statement text's named form, hashed once (the texts are the store's own, a few dozen shapes). */
  const named = new Map<string, NamedStatement>();

  async function query<R extends pg.QueryResultRow>(sql: string, values: unknown[] = []): Promise<R[]> {
    try {
      await prepare();
      let statement = named.get(sql);
      if (!statement) named.set(sql, (statement = namedStatement(sql)));
      return (await pool.query<R>({ ...statement, values })).rows;
    } catch (error) {
      throw postgresError(error, url);
    }
  }

  async function anchorId(tape: string, name: string | null, after = 0, first = false): Promise<number | undefined> {
    const where = name === null ? "kind = 'anchor'" : "anchor_name = $3";
    const sql = `SELECT id FROM bub_tape_entries WHERE tape = $1 AND ${where} AND id > $2 ORDER BY id ${first ? "ASC" : "DESC"} LIMIT 1`;
    const rows = await query<{ id: string }>(sql, name === null ? [tape, after] : [tape, after, name]);
    return rows[0] === undefined ? undefined : Number(rows[0].id);
  }

  function toEntry(row: EntryRow): TapeEntry | undefined {
    const entry = decodeEntry({ id: Number(row.id), kind: row.kind, payload: row.payload, meta: row.meta, date: row.date });
    if (typeof entry === "string") {
      log.warn(`tape.row_skipped database=${database} id=${row.id} reason=${entry}`);
      return undefined;
    }
    return entry;
  }

  async function fetch(query_: TapeQuery): Promise<TapeEntry[]> {
    const slice = anchorSliceOf(query_);
    const filter = compileFilter(query_);
    let lower = 0;
    let upper = Number.MAX_SAFE_INTEGER;
    const limit = filter.limit ?? Infinity;
    const kinds = query_.kinds && query_.kinds.length > 0 ? [...new Set(query_.kinds)] : null;
    const order = filter.newestFirst ? "DESC" : "ASC";
    const sql = `SELECT id, kind, payload, meta, date FROM bub_tape_entries WHERE tape = $1 AND id > $2 AND id < $3${kinds ? " AND kind = ANY($5)" : ""} ORDER BY id ${order} LIMIT $4`;
    const found: TapeEntry[] = [];
    /** Keeps the page's matching entries; answers whether the fetch is done. */
    const take = (rows: readonly EntryRow[], page: number): boolean => {
      for (const row of rows) {
        const entry = toEntry(row);
        if (entry && filter.matches(entry)) found.push(entry);
        if (found.length >= limit) return true;
      }
      if (rows.length < page) return true;
      const last = Number(rows[rows.length - 1].id);
      if (filter.newestFirst) upper = last;
      else lower = last;
      return false;
    };
    // Without filters the limit is the page; with them, pages until enough entries match.
    const pageSize = () => (filter.passAll && limit < PAGE ? limit : PAGE);
    if ((slice.mode === "last" || slice.mode === "after") && limit > 0 && filter.afterId === undefined) {
      // The anchor and the first page in one statement (the turn's usual read).
      const page = pageSize();
      const where = slice.mode === "last" ? "kind = 'anchor'" : "anchor_name = $5";
      const values: unknown[] = [query_.tape, upper, page, kinds ?? []];
      if (slice.mode === "after") values.push(slice.name);
      const rows = await query<EntryRow & { anchor: string }>(
        `WITH a AS (SELECT id FROM bub_tape_entries WHERE tape = $1 AND ${where} ORDER BY id DESC LIMIT 1)
         SELECT a.id AS anchor, e.id, e.kind, e.payload, e.meta, e.date FROM a LEFT JOIN LATERAL (
           SELECT id, kind, payload, meta, date FROM bub_tape_entries
            WHERE tape = $1 AND id > a.id AND id < $2 AND (cardinality($4::text[]) = 0 OR kind = ANY($4::text[])) ORDER BY id ${order} LIMIT $3
         ) e ON true`,
        values,
      );
      const [head] = rows;
      if (head === undefined) throw slice.mode === "last" ? noAnchorsFound() : anchorNotFound(slice.name);
      lower = Number(head.anchor);
      const entries = head.id === null ? [] : rows;
      if (take(entries, page)) return found;
    } else if (slice.mode === "last") {
      const id = await anchorId(query_.tape, null);
      if (id === undefined) throw noAnchorsFound();
      lower = id;
    } else if (slice.mode === "after") {
      const id = await anchorId(query_.tape, slice.name);
      if (id === undefined) throw anchorNotFound(slice.name);
      lower = id;
    } else if (slice.mode === "between") {
      const start = await anchorId(query_.tape, slice.start);
      if (start === undefined) throw anchorNotFound(slice.start);
      const end = await anchorId(query_.tape, slice.end, start, true);
      if (end === undefined) throw anchorNotFound(slice.end);
      lower = start;
      upper = end;
    }
    if (filter.afterId !== undefined) lower = Math.max(lower, filter.afterId);
    if (limit === 0) return [];
    for (;;) {
      const page = pageSize();
      const rows = await query<EntryRow>(sql, kinds ? [query_.tape, lower, upper, page, kinds] : [query_.tape, lower, upper, page]);
      if (take(rows, page)) return found;
    }
  }

  /** Appends asked for while another is being written go together in the next statement. */
  const appends = coalescing((batch: readonly Append[]) => appendAll(batch), MAX_APPENDS);

  /** Writes `batch` in one statement (the shapes for one tape alone when it has one append) and answers each append's first id. */
  async function appendAll(batch: readonly Append[]): Promise<number[]> {
    const [only] = batch;
    let first: number[];
    if (batch.length === 1 && only) {
      const { tape, encoded, name } = only;
      const values = [tape, encoded.length, ...entryColumns(encoded)];
      const rows = name ? await query<{ id: string }>(APPEND_NAMED_SQL, [...values, name.sessionId, name.workspace, name.date]) : await query<{ id: string }>(APPEND_SQL, values);
      first = [rows.reduce((lowest, row) => Math.min(lowest, Number(row.id)), Infinity)];
    } else first = firstIds(batch, await query<{ tape: string; id: string }>(APPEND_MANY_SQL, appendManyValues(batch)));
    for (const { tape, name } of batch) {
      if (name && pendingNames.get(tape) === name) {
        pendingNames.delete(tape);
        recorded.add(tape);
      }
    }
    return first;
  }

  async function appendRows(tape: string, encoded: readonly EncodedEntry[]): Promise<TapeEntry[]> {
    if (encoded.length === 0) return [];
    const first = await appends.load({ tape, encoded, name: pendingNames.get(tape) });
    return encoded.map(({ value }, index) => ({ id: first + index, ...value }));
  }

  /** Encodes `batch` and appends it; an entry that cannot be encoded rejects the call. */
  async function appendBatch(tape: string, batch: readonly NewTapeEntry[]): Promise<TapeEntry[]> {
    return appendRows(tape, batch.map(encodeNewEntry));
  }

  /** Writes the names still waiting for their tape's first append (one statement). */
  async function writePendingNames(): Promise<void> {
    if (pendingNames.size === 0) return;
    const waiting = [...pendingNames];
    await query(NAMES_SQL, [waiting.map(([tape]) => tape), waiting.map(([, name]) => name.sessionId), waiting.map(([, name]) => name.workspace), waiting.map(([, name]) => name.date)]);
    for (const [tape, name] of waiting) {
      if (pendingNames.get(tape) === name) pendingNames.delete(tape);
      recorded.add(tape);
    }
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    try {
      await writePendingNames();
    } catch (error) {
      log.warn(`tape.name_index.failed database=${database} reason=${errorMessage(error)}`);
    }
    await pool.end();
  }

  return {
    database,
    async listTapes() {
      const rows = await query<{ name: string }>("SELECT name FROM bub_tapes");
      return rows.map((row) => row.name).filter((name) => !isSidecarTapeName(name)).sort();
    },
    fetchAll: fetch,
    async append(tape, entry) {
      return onlyEntry(await appendBatch(tape, [entry]));
    },
    appendBatch,
    appendEncoded: appendRows,
    async reset(tape) {
      // One statement: both deletes commit together.
      await query("WITH gone AS (DELETE FROM bub_tape_entries WHERE tape = $1) DELETE FROM bub_tapes WHERE name = $1", [tape]);
    },
    /** Kept until the tape's next append here (see `pendingNames`); the first record of a tape wins. */
    async recordTapeName(record: TapeNameRecord) {
      if (recorded.has(record.tape) || pendingNames.has(record.tape)) return;
      pendingNames.set(record.tape, { sessionId: record.sessionId, workspace: record.workspace, date: utcNow() });
      if (pendingNames.size > MAX_PENDING_NAMES) await writePendingNames();
    },
    async tapeNames() {
      await writePendingNames();
      const rows = await query<{ tape: string; session_id: string; workspace: string }>("SELECT tape, session_id, workspace FROM bub_tape_names");
      return rows
        .map((row) => ({ tape: row.tape, sessionId: row.session_id, workspace: row.workspace }))
        .sort((a, b) => (a.tape < b.tape ? -1 : a.tape > b.tape ? 1 : 0));
    },
    async tapeStats(): Promise<TapeStats[]> {
      type Row = { tape: string; entries: string; bytes: string; turn_ids: string; legacy_turns: string; last_date: string | null };
      const rows = await query<Row>(STATS_SQL);
      return rows
        .filter((row) => !isSidecarTapeName(row.tape))
        .sort((a, b) => (a.tape < b.tape ? -1 : a.tape > b.tape ? 1 : 0))
        .map((row) => ({
          tape: row.tape,
          entries: Number(row.entries),
          turns: Number(row.turn_ids) + Number(row.legacy_turns),
          lastDate: row.last_date,
          bytes: Number(row.bytes),
        }));
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
