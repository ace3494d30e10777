import type { TapeQuery } from "../kernel/tape-contract.ts";

/** A date bound: an ISO date/datetime string or a `Date` (sent as its ISO form). */
export type DateBound = string | Date | null | undefined;

/**
 * An immutable way to write a {@link TapeQuery}: every method returns a new builder.
 *
 * ```ts
 * const query = tapeQuery(tape).lastAnchor().kinds("message", "tool_result").limit(20).build();
 * const found = await store.fetchAll(query);
 * ```
 */
export interface TapeQueryBuilder {
  /** The tape this query reads. */
  readonly tape: string;
  /** Keeps entries whose JSON contains `value`, case-insensitively; results come newest first. */
  text(value: string): TapeQueryBuilder;
  /** Entries after the last anchor named `name`; an empty name clears anchor slicing. */
  afterAnchor(name: string): TapeQueryBuilder;
  /** Entries after the last anchor of any name. */
  lastAnchor(): TapeQueryBuilder;
  /** Entries strictly between the last anchor named `start` and the next anchor named `end`. */
  betweenAnchors(start: string, end: string): TapeQueryBuilder;
  /** Entries dated within the bounds (inclusive); a date-only bound covers its whole UTC day; either may be omitted. */
  betweenDates(start?: DateBound, end?: DateBound): TapeQueryBuilder;
  /** Only entries of these kinds (none given: every kind). */
  kinds(...kinds: string[]): TapeQueryBuilder;
  /** At most `value` entries. */
  limit(value: number): TapeQueryBuilder;
  /** Only entries with an id above `id` (appended after the entry `id`). */
  afterId(id: number): TapeQueryBuilder;
  /** The plain query object stores take. */
  build(): TapeQuery;
}

function boundText(value: DateBound): string | undefined {
  if (value === null || value === undefined) return undefined;
  return value instanceof Date ? value.toISOString() : value;
}

function builder(query: TapeQuery): TapeQueryBuilder {
  const next = (change: Partial<TapeQuery>): TapeQueryBuilder => builder(Object.freeze({ ...query, ...change }));
  return {
    tape: query.tape,
    text: (value) => next({ text: value }),
    afterAnchor: (name) => next({ afterAnchor: name === "" ? undefined : name, lastAnchor: undefined }),
    lastAnchor: () => next({ afterAnchor: undefined, lastAnchor: true }),
    betweenAnchors: (start, end) => next({ betweenAnchors: Object.freeze({ start, end }) }),
    betweenDates: (start, end) => next({ betweenDates: Object.freeze({ start: boundText(start), end: boundText(end) }) }),
    kinds: (...kinds) => next({ kinds: Object.freeze([...kinds]) }),
    limit: (value) => next({ limit: value }),
    afterId: (id) => next({ afterId: id }),
    build: () => withoutUndefined(query),
  };
}

/** A frozen copy of `query` without the fields set to undefined. */
function withoutUndefined(query: TapeQuery): TapeQuery {
  const out: TapeQuery = { ...query };
  for (const key of Object.keys(out)) if (Reflect.get(out, key) === undefined) Reflect.deleteProperty(out, key);
  return Object.freeze(out);
}

/** Starts a query on `tape` (or continues from an existing query object). */
export function tapeQuery(tape: string | TapeQuery): TapeQueryBuilder {
  return builder(Object.freeze(typeof tape === "string" ? { tape } : { ...tape }));
}
