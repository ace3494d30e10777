/**
 * Appends to the tapes in PostgreSQL. One statement, so one implicit transaction, per batch:
 * bump each tape's `last_id` by its entries (the row lock it takes is held until commit, so
 * concurrent writers to one tape queue up and commit in id order), then insert the entries
 * with the ids just reserved. Appends asked for while another is being written (turns of
 * several sessions merging at once) go together in the next statement (./coalesce.ts).
 */
import type { EncodedEntry } from "../entry.ts";

/**
 * One tape's entries: $1 tape, $2 how many, $3–$7 kinds, anchor names, payloads, metas,
 * dates. Exported for bench/cluster/append-cost.ts, which measures what it costs the server.
 */
export const APPEND_SQL = `
WITH reserved AS (
  INSERT INTO bub_tapes (name, last_id) VALUES ($1, $2)
  ON CONFLICT (name) DO UPDATE SET last_id = bub_tapes.last_id + EXCLUDED.last_id
  RETURNING last_id
)
INSERT INTO bub_tape_entries (tape, id, kind, anchor_name, payload, meta, date)
SELECT $1, reserved.last_id - $2 + e.ord, e.kind, e.anchor_name, e.payload::json, e.meta::json, e.date
FROM reserved CROSS JOIN unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) WITH ORDINALITY AS e(kind, anchor_name, payload, meta, date, ord)
RETURNING id`;

/**
 * {@link APPEND_SQL} that also records the tape in the name index ($8 session, $9 workspace,
 * $10 date), unless it is there already: a session tape's name goes in with its first append
 * in this process, in the same statement and commit.
 */
export const APPEND_NAMED_SQL = APPEND_SQL.replace(
  "WITH reserved AS (",
  `WITH named AS (
  INSERT INTO bub_tape_names (tape, session_id, workspace, date) VALUES ($1, $8, $9, $10) ON CONFLICT (tape) DO NOTHING
), reserved AS (`,
);

/**
 * The entries of several appends, of one or more tapes, in one statement: $1 each entry's
 * tape, $2–$6 its kind, anchor name, payload, meta and date, in the order appended; $7–$10
 * names for the name index (tapes, sessions, workspaces, dates), as {@link APPEND_NAMED_SQL}.
 * The tapes' rows are locked in name order, so two such statements never wait on each other
 * in a cycle. Answers each entry's tape and id.
 */
export const APPEND_MANY_SQL = `
WITH e AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS e(tape, kind, anchor_name, payload, meta, date, ord)
), counts AS (
  SELECT tape, count(*) AS n FROM e GROUP BY tape
), named AS (
  INSERT INTO bub_tape_names (tape, session_id, workspace, date)
  SELECT * FROM unnest($7::text[], $8::text[], $9::text[], $10::text[]) ON CONFLICT (tape) DO NOTHING
), reserved AS (
  INSERT INTO bub_tapes (name, last_id) SELECT tape, n FROM counts ORDER BY tape
  ON CONFLICT (name) DO UPDATE SET last_id = bub_tapes.last_id + EXCLUDED.last_id
  RETURNING name, last_id
)
INSERT INTO bub_tape_entries (tape, id, kind, anchor_name, payload, meta, date)
SELECT e.tape, r.last_id - c.n + row_number() OVER (PARTITION BY e.tape ORDER BY e.ord), e.kind, e.anchor_name, e.payload::json, e.meta::json, e.date
FROM e JOIN counts c ON c.tape = e.tape JOIN reserved r ON r.name = e.tape
RETURNING tape, id`;

/** A session tape's name for the index, written with the tape's first append. */
export interface PendingName {
  readonly sessionId: string;
  readonly workspace: string;
  readonly date: string;
}

/** One append: a tape's entries, encoded, and its name when the index still waits for it. */
export interface Append {
  readonly tape: string;
  readonly encoded: readonly EncodedEntry[];
  readonly name: PendingName | undefined;
}

/** The columns of `encoded` as the statements above take them: kinds, anchor names, payloads, metas, dates. */
export function entryColumns(encoded: readonly EncodedEntry[]): [string[], (string | null)[], string[], string[], string[]] {
  const columns: [string[], (string | null)[], string[], string[], string[]] = [[], [], [], [], []];
  for (const { value, payloadJson, metaJson } of encoded) {
    columns[0].push(value.kind);
    columns[1].push(value.kind === "anchor" && typeof value.payload.name === "string" ? value.payload.name : null);
    columns[2].push(payloadJson);
    columns[3].push(metaJson);
    columns[4].push(value.date);
  }
  return columns;
}

/** The values with which {@link APPEND_MANY_SQL} writes `appends`. */
export function appendManyValues(appends: readonly Append[]): unknown[] {
  const tapes = appends.flatMap(({ tape, encoded }) => encoded.map(() => tape));
  const columns = entryColumns(appends.flatMap(({ encoded }) => encoded));
  const named = new Map<string, PendingName>();
  for (const { tape, name } of appends) if (name) named.set(tape, name);
  const names = [...named];
  return [tapes, ...columns, names.map(([tape]) => tape), names.map(([, name]) => name.sessionId), names.map(([, name]) => name.workspace), names.map(([, name]) => name.date)];
}

/**
 * The first id each append got, from the rows {@link APPEND_MANY_SQL} answered: a tape's
 * appends got consecutive ids in the order they were asked for.
 */
export function firstIds(appends: readonly Append[], rows: readonly { tape: string; id: string }[]): number[] {
  const next = new Map<string, number>();
  for (const row of rows) next.set(row.tape, Math.min(next.get(row.tape) ?? Infinity, Number(row.id)));
  return appends.map(({ tape, encoded }) => {
    const first = next.get(tape) ?? Infinity;
    next.set(tape, first + encoded.length);
    return first;
  });
}
