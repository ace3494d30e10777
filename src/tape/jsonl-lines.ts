/**
 * Reading lines of a JSONL tape file by byte range, forwards and backwards, through an open
 * file handle, off the event loop. Lines are split on the `\n` byte, which never occurs
 * inside a multi-byte UTF-8 character, so byte offsets stay exact.
 */
import type { TapeEntry } from "../kernel/tape-contract.ts";
import { parseEntryLine } from "./entry.ts";

const BLOCK_BYTES = 64 * 1024;
/**
 * The first block a backward read takes. Most backward reads want the last few lines (what
 * came since the last turn, the last entry's id), so a read starts small and doubles block by
 * block up to {@link BLOCK_BYTES}: the bytes read follow what is wanted, not the file's size.
 */
const FIRST_BACKWARD_BYTES = 4 * 1024;
const NEWLINE = 0x0a;
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** What the readers need of an open file: positioned reads (a `FileHandle` is one). */
export interface ByteSource {
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
}

/** Reads `length` bytes at `position` (fewer if the file is shorter). */
export async function readBytes(file: ByteSource, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await file.read(buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled === length ? buffer : buffer.subarray(0, filled);
}

/** One line: its byte range in the file (`end` is just past its newline, if any) and its text bytes. */
export interface RawLine {
  readonly start: number;
  readonly end: number;
  readonly bytes: Buffer;
}

/**
 * Decodes a line into an entry. Returns `null` for a blank line and a reason for a line that
 * is not an entry (invalid UTF-8, not JSON, not entry-shaped).
 */
export function decodeLine(bytes: Buffer): TapeEntry | string | null {
  const text = bytes.toString("utf8");
  if (text.includes("\uFFFD")) {
    try {
      strictUtf8.decode(bytes);
    } catch {
      return "invalid UTF-8";
    }
  }
  const parsed = parseEntryLine(text);
  if (typeof parsed === "string" && text.trim() === "") return null;
  return parsed;
}

/**
 * Visits the lines in `[start, end)` oldest first until `visit` returns false. `start` must
 * be a line start. A last segment without a newline is visited only when `tailIsLine`;
 * the offset after the last visited line is returned.
 */
export async function forEachLine(file: ByteSource, start: number, end: number, tailIsLine: boolean, visit: (line: RawLine) => boolean): Promise<number> {
  let position = start;
  let blockBytes = BLOCK_BYTES;
  while (position < end) {
    const requested = Math.min(blockBytes, end - position);
    const buffer = await readBytes(file, position, requested);
    const atEnd = position + requested >= end || buffer.length < requested;
    let cursor = 0;
    while (cursor < buffer.length) {
      const newline = buffer.indexOf(NEWLINE, cursor);
      if (newline < 0 && !(atEnd && tailIsLine)) break;
      const stop = newline < 0 ? buffer.length : newline;
      const line = { start: position + cursor, end: position + Math.min(stop + 1, buffer.length), bytes: buffer.subarray(cursor, stop) };
      cursor = line.end - position;
      if (!visit(line)) return position + cursor;
    }
    if (cursor === 0) {
      if (atEnd) break;
      blockBytes *= 2;
      continue;
    }
    position += cursor;
    blockBytes = BLOCK_BYTES;
  }
  return position;
}

/**
 * Visits the complete lines in `[floor, end)` (both line boundaries), newest first, until
 * `visit` returns false. Returns the start of the oldest line visited (or `end`).
 */
export async function forEachLineBackward(file: ByteSource, end: number, visit: (line: RawLine) => boolean, floor = 0): Promise<number> {
  let boundary = end;
  let blockBytes = FIRST_BACKWARD_BYTES;
  while (boundary > floor) {
    const blockStart = Math.max(floor, boundary - blockBytes);
    const buffer = await readBytes(file, blockStart, boundary - blockStart);
    const first = blockStart === floor ? 0 : buffer.indexOf(NEWLINE) + 1;
    if (blockStart > floor && (first === 0 || first >= buffer.length)) {
      blockBytes *= 2;
      continue;
    }
    let lineEnd = buffer.length;
    while (lineEnd > first) {
      const previous = lineEnd >= 2 ? buffer.lastIndexOf(NEWLINE, lineEnd - 2) : -1;
      const lineStart = Math.max(previous + 1, first);
      const hasNewline = buffer[lineEnd - 1] === NEWLINE;
      const line = { start: blockStart + lineStart, end: blockStart + lineEnd, bytes: buffer.subarray(lineStart, hasNewline ? lineEnd - 1 : lineEnd) };
      boundary = line.start;
      if (!visit(line)) return boundary;
      lineEnd = lineStart;
    }
    blockBytes = Math.min(blockBytes * 2, BLOCK_BYTES);
  }
  return boundary;
}

/** The offset just past the last newline before `end` (0 when there is none). */
export async function lastLineBoundary(file: ByteSource, end: number): Promise<number> {
  let position = end;
  let blockBytes = FIRST_BACKWARD_BYTES;
  while (position > 0) {
    const blockStart = Math.max(0, position - blockBytes);
    const buffer = await readBytes(file, blockStart, position - blockStart);
    const newline = buffer.lastIndexOf(NEWLINE);
    if (newline >= 0) return blockStart + newline + 1;
    position = blockStart;
    blockBytes = Math.min(blockBytes * 2, BLOCK_BYTES);
  }
  return 0;
}
