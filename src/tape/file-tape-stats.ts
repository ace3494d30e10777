/**
 * {@link TapeStats} of JSONL tape files, for `bub tape list` over thousands of tapes: each
 * file is read once and scanned as bytes, without decoding its entries. Only the last
 * entry is decoded (its id is the entry count, since ids run from 1 without gaps) and lines
 * that might open a turn on a tape written before turn ids.
 */
import { closeSync, readSync } from "node:fs";
import { FileRefusedError, openRegularFileSync } from "../config/bounded-file.ts";
import { join } from "node:path";
import type { TapeStats } from "../kernel/tape-contract.ts";
import { parseEntryLine } from "./entry.ts";
import { isLegacyTurnStart, turnIdOf, TurnTracker } from "./turns.ts";
import { errorCode } from "../config/thrown.ts";

const NEWLINE = 0x0a;
const QUOTE = 0x22;
const SPACE = 0x20;
const META_KEY = Buffer.from('"meta":');
const TURN_KEY = Buffer.from('"turn_id":');
const LEGACY_MARKS = [Buffer.from('"loop.start"'), Buffer.from('"command"')];
const ID_PREFIX = /^\{"id": ?(\d+),/;
const DATE_SUFFIX = /"date": ?"([^"\\]+)"\}\s*$/;

/**
 * The next occurrence of a needle at or after `from`, reusing the last answer while it is
 * still ahead: the lines are scanned forwards, so each needle is searched for once per hit,
 * not once per line (a tape where it never occurs is not scanned again for every line).
 */
class Finder {
  readonly #buffer: Buffer;
  readonly #needle: Buffer;
  #at = -2;
  constructor(buffer: Buffer, needle: Buffer) {
    this.#buffer = buffer;
    this.#needle = needle;
  }
  from(position: number): number {
    if (this.#at === -1 || this.#at >= position) return this.#at;
    return (this.#at = this.#buffer.indexOf(this.#needle, position));
  }
}

/** The id and date of a line, read from its ends, else by decoding it; null when it is not an entry. */
function lastEntryOf(text: string): { id: number; date: string } | null {
  const id = ID_PREFIX.exec(text);
  const date = DATE_SUFFIX.exec(text.length > 200 ? text.slice(-200) : text);
  if (id && date) return { id: Number(id[1]), date: date[1] };
  const entry = parseEntryLine(text);
  return typeof entry === "string" ? null : { id: entry.id, date: entry.date };
}

/**
 * The scan of one tape, fed its lines in order (in one buffer or chunk by chunk): the turns
 * they open and the last entry.
 */
class TapeScan {
  readonly #tracker = new TurnTracker();
  turns = 0;
  last: { id: number; date: string } | null = null;

  /** Scans the lines in `buffer[from, to)`; `to` is a line end (a newline, or the end of the data). */
  lines(buffer: Buffer, from: number, to: number): void {
    const turnKeys = new Finder(buffer, TURN_KEY);
    const legacyMarks = LEGACY_MARKS.map((mark) => new Finder(buffer, mark));
    let lastLine: [number, number] | null = null;
    let position = from;
    while (position < to) {
      const newline = buffer.indexOf(NEWLINE, position);
      const end = newline < 0 || newline > to ? to : newline;
      if (end > position) {
        const start = position;
        let turnId: string | null = null;
        let decoded: ReturnType<typeof parseEntryLine> | undefined;
        const decode = () => (decoded ??= parseEntryLine(buffer.toString("utf8", start, end)));
        // `meta` follows `payload` in every line the runtimes write: a turn id found after the
        // last `"meta":` is the entry's own, never text inside its payload.
        const meta = buffer.lastIndexOf(META_KEY, end - 1);
        if (meta >= start) {
          const key = turnKeys.from(meta);
          if (key >= 0 && key < end) {
            let open = key + TURN_KEY.length;
            while (buffer[open] === SPACE) open++;
            const close = buffer[open] === QUOTE ? buffer.indexOf(QUOTE, open + 1) : -1;
            if (close > open + 1 && close < end) turnId = buffer.toString("latin1", open + 1, close);
          }
        } else {
          const entry = decode();
          if (typeof entry !== "string") turnId = turnIdOf(entry);
        }
        const legacyStart = () => {
          const marked = legacyMarks.some((marks) => {
            const at = marks.from(start);
            return at >= 0 && at < end;
          });
          if (!marked) return false;
          const entry = decode();
          return typeof entry !== "string" && isLegacyTurnStart(entry);
        };
        if (this.#tracker.nextId(turnId, legacyStart) === "new") this.turns++;
        lastLine = [start, end];
      }
      position = end + 1;
    }
    if (lastLine === null) return;
    // The newest entry of these lines: walk back over lines that are not entries (a torn write).
    for (let end = lastLine[1], start = lastLine[0]; ; ) {
      const found = lastEntryOf(buffer.toString("utf8", start, end));
      if (found) {
        this.last = found;
        return;
      }
      if (start <= from) return;
      end = start - 1;
      const previous = buffer.lastIndexOf(NEWLINE, end - 1);
      start = previous < from ? from : previous + 1;
    }
  }

  stats(): Omit<TapeStats, "tape" | "bytes"> {
    return { entries: this.last?.id ?? 0, turns: this.turns, lastDate: this.last?.date ?? null };
  }
}

/** Entry count, turns and last date of the bytes of one JSONL tape. */
export function scanTapeBytes(buffer: Buffer): Omit<TapeStats, "tape" | "bytes"> {
  const scan = new TapeScan();
  scan.lines(buffer, 0, buffer.length);
  return scan.stats();
}

const CHUNK_BYTES = 1 << 20;
/** One read buffer for every file (grown for a line longer than it): no garbage per tape. */
let shared: Buffer | null = null;

/**
 * {@link scanTapeBytes} of `<directory>/<tape>.jsonl`, read in chunks of 1 MiB into a shared
 * buffer, with the file's size; null when the file is gone. Synchronous: page-cached files
 * are read several times faster this way than through the thread pool, which is what a list
 * of 10,000 tapes spends its time on; {@link scanTapeFiles} yields to the event loop between tapes.
 */
export function scanTapeFile(directory: string, tape: string): TapeStats | null {
  let fd: number;
  try {
    fd = openRegularFileSync(join(directory, `${tape}.jsonl`), "the tape file");
  } catch (error) {
    // A FIFO or a device in the tapes folder is no tape: listing skips it instead of blocking on it.
    if (errorCode(error) === "ENOENT" || error instanceof FileRefusedError) return null;
    throw error;
  }
  try {
    let buffer = (shared ??= Buffer.allocUnsafe(CHUNK_BYTES));
    const scan = new TapeScan();
    let bytes = 0;
    let kept = 0; // bytes of an unfinished line carried over from the last chunk
    for (;;) {
      if (kept === buffer.length) {
        const bigger = Buffer.allocUnsafe(buffer.length * 2);
        buffer.copy(bigger, 0, 0, kept);
        buffer = shared = bigger;
      }
      const wanted = buffer.length - kept;
      const count = readSync(fd, buffer, kept, wanted, null);
      bytes += count;
      const filled = kept + count;
      // A regular file reads short only at its end: no extra read to see a 0.
      if (count < wanted) {
        scan.lines(buffer, 0, filled);
        break;
      }
      const lastNewline = buffer.lastIndexOf(NEWLINE, filled - 1);
      if (lastNewline < 0) {
        kept = filled;
        continue;
      }
      scan.lines(buffer, 0, lastNewline);
      kept = filled - lastNewline - 1;
      buffer.copy(buffer, 0, lastNewline + 1, filled);
    }
    return { tape, ...scan.stats(), bytes };
  } finally {
    closeSync(fd);
  }
}

/** {@link TapeStats} of the tapes named, in the order given; tapes whose file disappeared are left out. */
export async function scanTapeFiles(directory: string, tapes: readonly string[]): Promise<TapeStats[]> {
  const found: TapeStats[] = [];
  let started = performance.now();
  for (const tape of tapes) {
    const stats = scanTapeFile(directory, tape);
    if (stats) found.push(stats);
    // Let other work run (a server, a gateway's turns) every few milliseconds.
    if (performance.now() - started > 8) {
      await new Promise((resolve) => setImmediate(resolve));
      started = performance.now();
    }
  }
  return found;
}
