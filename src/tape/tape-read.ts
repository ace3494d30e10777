/**
 * Queries on one tape file: the index narrows the query's anchor slice to a byte range, and
 * only the lines in that range are read, backwards when the newest entries come first.
 */
import type { TapeEntry, TapeQuery } from "../kernel/tape-contract.ts";
import { decodeLine, forEachLine, forEachLineBackward, lastLineBoundary } from "./jsonl-lines.ts";
import { anchorSliceOf, compileFilter } from "./query-engine.ts";
import type { TapeIndex } from "./tape-index.ts";

/** Entries of the file open as `fd` matching `query`, with the shared query semantics; `index` must be up to date. */
export function readTape(fd: number, index: TapeIndex, query: TapeQuery): TapeEntry[] {
  const { start, end } = index.rangeOf(fd, anchorSliceOf(query));
  const filter = compileFilter(query);
  if (filter.limit === 0) return [];
  const found: TapeEntry[] = [];
  const limit = filter.limit ?? Infinity;
  const needles = kindNeedles(query);
  const visit = (entry: TapeEntry): boolean => {
    if (filter.matches(entry)) found.push(entry);
    return found.length < limit;
  };
  if (filter.newestFirst) readEntriesBackward(fd, index, start, end, visit, needles);
  else readEntries(fd, index, start, end, visit, needles);
  return found;
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

/** Decodes one line and hands its entry to `visit`; blank lines pass, bad ones are skipped with a warning. */
function visitLine(index: TapeIndex, line: { start: number; bytes: Buffer }, visit: (entry: TapeEntry) => boolean, needles: Buffer[] | null = null): boolean {
  if (needles && !needles.some((needle) => line.bytes.includes(needle))) return true;
  const decoded = decodeLine(line.bytes);
  if (decoded === null) return true;
  if (typeof decoded === "string") {
    index.skip(line.start, decoded);
    return true;
  }
  return visit(decoded);
}

function readEntries(fd: number, index: TapeIndex, start: number, end: number, visit: (entry: TapeEntry) => boolean, needles: Buffer[] | null = null): void {
  if (start >= end) return;
  forEachLine(fd, start, end, true, (line) => visitLine(index, line, visit, needles));
}

function readEntriesBackward(fd: number, index: TapeIndex, start: number, end: number, visit: (entry: TapeEntry) => boolean, needles: Buffer[] | null = null): void {
  if (start >= end) return;
  // Where the unterminated last entry starts (just after the last newline).
  const tail = end === index.size && index.openTail ? lastLineBoundary(fd, index.size) : end;
  if (tail < end) {
    // The last entry has no newline yet; the backward reader only sees whole lines.
    let keepGoing = true;
    readEntries(fd, index, tail, end, (entry) => (keepGoing = visit(entry)), needles);
    if (!keepGoing) return;
  }
  forEachLineBackward(fd, tail, (line) => visitLine(index, line, visit, needles), start);
}
