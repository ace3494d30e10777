/**
 * Queries on one tape file: the index narrows the query's anchor slice to a byte range, and
 * only the lines in that range are read, backwards when the newest entries come first.
 */
import type { TapeEntry, TapeQuery } from "../kernel/tape-contract.ts";
import { decodeLine, forEachLine, forEachLineBackward, lastLineBoundary, type ByteSource } from "./jsonl-lines.ts";
import { anchorSliceOf, compileFilter } from "./query-engine.ts";
import type { TapeIndex } from "./tape-index.ts";

/** Entries of the open `file` matching `query`, with the shared query semantics; `index` must be up to date. */
export async function readTape(file: ByteSource, index: TapeIndex, query: TapeQuery): Promise<TapeEntry[]> {
  const { start, end } = await index.rangeOf(file, anchorSliceOf(query));
  const filter = compileFilter(query);
  if (filter.limit === 0) return [];
  const found: TapeEntry[] = [];
  const limit = filter.limit ?? Infinity;
  const needles = kindNeedles(query);
  const { afterId } = filter;
  if (afterId !== undefined) {
    // Ids increase along the file: read back from the end to the first entry at or below
    // `afterId`, or to the one just after it (nothing older can be newer), so a reader that
    // remembers where it stopped reads only what came since.
    const newer: TapeEntry[] = [];
    const visitNewer = (entry: TapeEntry): boolean => {
      if (entry.id <= afterId) return false;
      if (filter.matches(entry)) newer.push(entry);
      return entry.id !== afterId + 1 && (!filter.newestFirst || newer.length < limit);
    };
    await readEntriesBackward(file, index, start, end, visitNewer, needles, afterId);
    return filter.newestFirst ? newer : newer.reverse().slice(0, limit);
  }
  const visit = (entry: TapeEntry): boolean => {
    if (filter.matches(entry)) found.push(entry);
    return found.length < limit;
  };
  if (filter.newestFirst) await readEntriesBackward(file, index, start, end, visit, needles);
  else await readEntries(file, index, start, end, visit, needles);
  return found;
}

/** `{"id": N` at the start of a line, as both runtimes write it. */
const LEADING_ID = /^\{\s*"id"\s*:\s*(\d{1,15})\s*,/;

/** The id a line starts with, read without decoding the line; null when it does not start with one. */
function leadingId(bytes: Buffer): number | null {
  const match = LEADING_ID.exec(bytes.toString("latin1", 0, Math.min(bytes.length, 40)));
  return match ? Number(match[1]) : null;
}

/**
 * For a query by kinds, the quoted kinds (`"event"`): a line that contains none of them cannot
 * be of those kinds and is not decoded. Null when the query names no kinds, or a kind that
 * JSON might write escaped.
 */
function kindNeedles(query: TapeQuery): Buffer[] | null {
  if (!query.kinds || query.kinds.length === 0 || !query.kinds.every((kind) => /^[\w./-]+$/.test(kind))) return null;
  return query.kinds.map((kind) => Buffer.from(`"${kind}"`));
}

/**
 * Decodes one line and hands its entry to `visit`; blank lines pass, bad ones are skipped with
 * a warning. A line that cannot be of the query's kinds is not decoded; with `stopAtId`, its
 * leading id still ends the read when it is at or below that id.
 */
function visitLine(index: TapeIndex, line: { start: number; bytes: Buffer }, visit: (entry: TapeEntry) => boolean, needles: Buffer[] | null = null, stopAtId?: number): boolean {
  if (needles && !needles.some((needle) => line.bytes.includes(needle))) {
    if (stopAtId === undefined) return true;
    const id = leadingId(line.bytes);
    if (id !== null) return id > stopAtId;
  }
  const decoded = decodeLine(line.bytes);
  if (decoded === null) return true;
  if (typeof decoded === "string") {
    index.skip(line.start, decoded);
    return true;
  }
  return visit(decoded);
}

async function readEntries(file: ByteSource, index: TapeIndex, start: number, end: number, visit: (entry: TapeEntry) => boolean, needles: Buffer[] | null = null, stopAtId?: number): Promise<void> {
  if (start >= end) return;
  await forEachLine(file, start, end, true, (line) => visitLine(index, line, visit, needles, stopAtId));
}

async function readEntriesBackward(
  file: ByteSource,
  index: TapeIndex,
  start: number,
  end: number,
  visit: (entry: TapeEntry) => boolean,
  needles: Buffer[] | null = null,
  stopAtId?: number,
): Promise<void> {
  if (start >= end) return;
  // Where the unterminated last entry starts (just after the last newline).
  const tail = end === index.size && index.openTail ? await lastLineBoundary(file, index.size) : end;
  if (tail < end) {
    // The last entry has no newline yet; the backward reader only sees whole lines.
    let keepGoing = true;
    await readEntries(file, index, tail, end, (entry) => (keepGoing = visit(entry)), needles, stopAtId);
    if (!keepGoing) return;
  }
  await forEachLineBackward(file, tail, (line) => visitLine(index, line, visit, needles, stopAtId), start);
}
