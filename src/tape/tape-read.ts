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
  const visit = (entry: TapeEntry): boolean => {
    if (filter.matches(entry)) found.push(entry);
    return found.length < limit;
  };
  if (filter.newestFirst) await readEntriesBackward(file, index, start, end, visit, needles);
  else await readEntries(file, index, start, end, visit, needles);
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

async function readEntries(file: ByteSource, index: TapeIndex, start: number, end: number, visit: (entry: TapeEntry) => boolean, needles: Buffer[] | null = null): Promise<void> {
  if (start >= end) return;
  await forEachLine(file, start, end, true, (line) => visitLine(index, line, visit, needles));
}

async function readEntriesBackward(file: ByteSource, index: TapeIndex, start: number, end: number, visit: (entry: TapeEntry) => boolean, needles: Buffer[] | null = null): Promise<void> {
  if (start >= end) return;
  // Where the unterminated last entry starts (just after the last newline).
  const tail = end === index.size && index.openTail ? await lastLineBoundary(file, index.size) : end;
  if (tail < end) {
    // The last entry has no newline yet; the backward reader only sees whole lines.
    let keepGoing = true;
    await readEntries(file, index, tail, end, (entry) => (keepGoing = visit(entry)), needles);
    if (!keepGoing) return;
  }
  await forEachLineBackward(file, tail, (line) => visitLine(index, line, visit, needles), start);
}
