/**
 * The meaning of a {@link TapeQuery}, shared by every store so they all answer alike.
 * Slicing by anchors comes first (a missing anchor is `not_found`), then the filters in the
 * reference's order (dates, text, kinds; then `afterId`, bub's own), then the limit. Text queries return the newest
 * matches first; every other query returns entries oldest first.
 */
import { BubError } from "../kernel/errors.ts";
import type { TapeEntry, TapeQuery } from "../kernel/tape-contract.ts";
import { parseIsoDate } from "./date.ts";
import { pythonJson } from "./python-format.ts";

/** Which part of a tape a query reads, decided by its anchor fields. */
export type AnchorSlice =
  | { readonly mode: "all" }
  | { readonly mode: "last" }
  | { readonly mode: "after"; readonly name: string }
  | { readonly mode: "between"; readonly start: string; readonly end: string };

/** The anchor slice of a query: `betweenAnchors` wins over `lastAnchor`, which wins over `afterAnchor`. */
export function anchorSliceOf(query: TapeQuery): AnchorSlice {
  if (query.betweenAnchors) return { mode: "between", start: query.betweenAnchors.start, end: query.betweenAnchors.end };
  if (query.lastAnchor) return { mode: "last" };
  if (query.afterAnchor) return { mode: "after", name: query.afterAnchor };
  return { mode: "all" };
}

/** The error for an anchor name that is not on the tape. */
export function anchorNotFound(name: string): BubError {
  return new BubError("not_found", `Anchor '${name}' was not found.`);
}

/** The error for a last-anchor read of a tape without anchors. */
export function noAnchorsFound(): BubError {
  return new BubError("not_found", "No anchors found in tape.");
}

/** True when `entry` is an anchor, and named `name` when a name is given. */
export function isAnchorNamed(entry: TapeEntry, name?: string): boolean {
  return entry.kind === "anchor" && (name === undefined || entry.payload.name === name);
}

function lastIndexWhere(entries: readonly TapeEntry[], test: (entry: TapeEntry) => boolean): number {
  for (let index = entries.length - 1; index >= 0; index--) if (test(entries[index])) return index;
  return -1;
}

/**
 * The entries a slice selects from a whole tape, oldest first.
 * @throws BubError `not_found` when the anchor the slice needs is missing.
 */
export function sliceByAnchors(entries: readonly TapeEntry[], slice: AnchorSlice): readonly TapeEntry[] {
  switch (slice.mode) {
    case "all":
      return entries;
    case "last": {
      const index = lastIndexWhere(entries, (entry) => entry.kind === "anchor");
      if (index < 0) throw noAnchorsFound();
      return entries.slice(index + 1);
    }
    case "after": {
      const index = lastIndexWhere(entries, (entry) => isAnchorNamed(entry, slice.name));
      if (index < 0) throw anchorNotFound(slice.name);
      return entries.slice(index + 1);
    }
    case "between": {
      const start = lastIndexWhere(entries, (entry) => isAnchorNamed(entry, slice.start));
      if (start < 0) throw anchorNotFound(slice.start);
      let end = -1;
      for (let index = start + 1; index < entries.length && end < 0; index++) if (isAnchorNamed(entries[index], slice.end)) end = index;
      if (end < 0) throw anchorNotFound(slice.end);
      return entries.slice(start + 1, end);
    }
  }
}

/** The filters of a query, checked and ready to test entries. */
export interface EntryFilter {
  /** Text queries return the newest matches first. */
  readonly newestFirst: boolean;
  /** At most this many entries (undefined: no limit). */
  readonly limit: number | undefined;
  /** True when the query filters on nothing but the limit. */
  readonly passAll: boolean;
  /** Only entries with a greater id (undefined: any id). */
  readonly afterId: number | undefined;
  /** Whether one entry passes the date, text and kind filters. */
  matches(entry: TapeEntry): boolean;
}

/** The lowercased text a text query searches: the entry's `{date, kind, meta, payload}` as sorted-key JSON, non-ASCII kept. */
export function searchableText(entry: TapeEntry): string {
  return pythonJson({ kind: entry.kind, date: entry.date, payload: entry.payload, meta: entry.meta }, { sortKeys: true }).toLowerCase();
}

function parseBound(value: string | undefined, bound: "start" | "end"): number | undefined {
  if (value === undefined || value === null || value.trim() === "") return undefined;
  const parsed = parseIsoDate(value, bound);
  if (parsed === null) throw new BubError("invalid_input", `Invalid ISO date or datetime: '${value}'.`);
  return parsed;
}

/**
 * Checks a query's filters and compiles them.
 * @throws BubError `invalid_input` for an unparsable date bound, a start after the end, or a bad limit or id.
 */
export function compileFilter(query: TapeQuery): EntryFilter {
  const { limit } = query;
  if (limit !== undefined && limit !== null && (!Number.isInteger(limit) || limit < 0)) {
    throw new BubError("invalid_input", `A tape query limit must be a whole number >= 0 (got ${String(limit)}).`);
  }
  const afterId = query.afterId ?? undefined;
  if (afterId !== undefined && (!Number.isInteger(afterId) || afterId < 0)) {
    throw new BubError("invalid_input", `A tape query afterId must be a whole number >= 0 (got ${String(afterId)}).`);
  }
  const start = parseBound(query.betweenDates?.start, "start");
  const end = parseBound(query.betweenDates?.end, "end");
  if (start !== undefined && end !== undefined && start > end) {
    throw new BubError("invalid_input", "Start date must be earlier than or equal to end date.");
  }
  const hasDates = start !== undefined || end !== undefined;
  const needle = query.text ? query.text.toLowerCase() : undefined;
  const kinds = query.kinds && query.kinds.length > 0 ? new Set(query.kinds) : undefined;
  const matches = (entry: TapeEntry): boolean => {
    if (afterId !== undefined && entry.id <= afterId) return false;
    if (hasDates) {
      const at = parseIsoDate(entry.date);
      if (at === null || (start !== undefined && at < start) || (end !== undefined && at > end)) return false;
    }
    if (needle !== undefined && !searchableText(entry).includes(needle)) return false;
    return kinds === undefined || kinds.has(entry.kind);
  };
  return { newestFirst: needle !== undefined, limit: limit ?? undefined, passAll: !hasDates && !needle && !kinds && afterId === undefined, afterId, matches };
}

/** Applies a compiled filter to a slice given oldest first: order, matching and limit. */
export function applyFilter(slice: readonly TapeEntry[], filter: EntryFilter): TapeEntry[] {
  const out: TapeEntry[] = [];
  const limit = filter.limit ?? Infinity;
  if (limit === 0) return out;
  if (filter.newestFirst) {
    for (let index = slice.length - 1; index >= 0 && out.length < limit; index--) {
      const entry = slice[index];
      if (filter.matches(entry)) out.push(entry);
    }
    return out;
  }
  for (const entry of slice) {
    if (out.length >= limit) break;
    if (filter.matches(entry)) out.push(entry);
  }
  return out;
}

/**
 * Runs a query over a whole tape held in memory (oldest first).
 * @throws BubError `not_found` / `invalid_input` with the reference's messages.
 */
export function runQuery(entries: readonly TapeEntry[], query: TapeQuery): TapeEntry[] {
  const slice = sliceByAnchors(entries, anchorSliceOf(query));
  return applyFilter(slice, compileFilter(query));
}
