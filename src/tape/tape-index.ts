/**
 * What is known about one JSONL tape file, read through its open handle.
 *
 * The index covers a suffix `[from, size)` of the file: anchor line offsets, the last id, and
 * the lines skipped as malformed. It grows forwards as lines are appended (by this process or
 * any other) and backwards only as far as a query needs, so reading "after the last anchor"
 * costs the bytes after that anchor however long the tape is, even on a cold start.
 *
 * Bytes after the last newline that do not form an entry are a *fragment*: a write in flight
 * or one torn by a crash. They are never served; the next append first writes a newline so
 * the fragment becomes a line of its own (skipped and reported), and nothing is rewritten.
 */
import type { TapeEntry } from "../kernel/tape-contract.ts";
import { createLogger } from "../kernel/log.ts";
import { decodeLine, forEachLine, forEachLineBackward, lastLineBoundary, readBytes, type ByteSource, type RawLine } from "./jsonl-lines.ts";
import { anchorNotFound, noAnchorsFound, type AnchorSlice } from "./query-engine.ts";

const log = createLogger("bub:tape");

/** A line of a tape file that was not served because it is not an entry. */
export interface SkippedLine {
  /** Byte offset of the line in the file. */
  readonly offset: number;
  readonly reason: string;
}

interface AnchorMark {
  readonly name: unknown;
  readonly start: number;
  readonly end: number;
}

/** One entry just appended, and the bytes of its line (newline included). */
export interface AppendedLine {
  readonly entry: TapeEntry;
  readonly lineBytes: number;
}

/**
 * The index of one tape file; every method that reads takes the file's open handle. Its
 * asynchronous methods must not overlap: the caller runs them one at a time per file.
 */
export class TapeIndex {
  readonly #path: string;
  /** True once `[from, size)` has been established for the current file. */
  #ready = false;
  #from = 0;
  #size = 0;
  #fileSize = 0;
  /** The indexed part ends with an entry that has no newline yet. */
  #openTail = false;
  /** Bytes after `size` that are not (yet) an entry. */
  #fragment = false;
  #fragmentCheckedAt = -1;
  #anchors: AnchorMark[] = [];
  #anchorByName = new Map<unknown, AnchorMark>();
  #lastId = 0;
  /** The date of the entry with {@link #lastId}. */
  #lastDate = "";
  #hasEntries = false;
  #skipped = new Map<number, string>();

  /** `path` names the file in warnings. */
  constructor(path: string) {
    this.#path = path;
  }

  /** Where the indexed part ends: just after the last entry. */
  get size(): number {
    return this.#size;
  }

  /** The last indexed entry has no newline yet. */
  get openTail(): boolean {
    return this.#openTail;
  }

  /**
   * The id and date of the file's last entry, once the index reached it (ids increase along
   * the file, so it is the newest); null before. Call after {@link update}.
   */
  get lastEntry(): { readonly id: number; readonly date: string } | null {
    return this.#hasEntries ? { id: this.#lastId, date: this.#lastDate } : null;
  }

  /** An append must start with a newline, to end a fragment or an entry without one. */
  get needsSeparator(): boolean {
    return this.#fragment || this.#openTail;
  }

  /** Forgets everything (another file, or one that was deleted or truncated). */
  clear(): void {
    this.#ready = false;
    this.#from = this.#size = this.#fileSize = 0;
    this.#openTail = this.#fragment = this.#hasEntries = false;
    this.#fragmentCheckedAt = -1;
    this.#anchors = [];
    this.#anchorByName = new Map();
    this.#lastId = 0;
    this.#lastDate = "";
    this.#skipped = new Map();
  }

  /** Brings the index up to date with the file, now `fileSize` bytes long. */
  async update(file: ByteSource, fileSize: number): Promise<void> {
    if (fileSize < this.#size) this.clear();
    this.#fileSize = fileSize;
    if (!this.#ready) {
      this.#from = this.#size = await lastLineBoundary(file, fileSize);
      this.#ready = true;
    } else if (fileSize > this.#size) {
      await this.#catchUp(file);
    }
    await this.#checkTail(file);
  }

  /** The id the next appended entry gets, after indexing back as far as the last entry. */
  async nextId(file: ByteSource): Promise<number> {
    await this.#extendBackward(file, () => this.#hasEntries);
    return this.#lastId + 1;
  }

  /**
   * Indexes lines just appended at the end of the file: `separatorBytes` first (see
   * {@link needsSeparator}), then the entries' lines. A fragment they closed is skipped.
   */
  recordAppend(separatorBytes: number, appended: readonly AppendedLine[]): void {
    if (this.#fragment) this.skip(this.#size, "torn line: an earlier write was interrupted");
    let offset = this.#fileSize + separatorBytes;
    for (const { entry, lineBytes } of appended) {
      const start = offset;
      offset += lineBytes;
      this.#indexEntry(entry, start, offset, "forward");
    }
    this.#size = this.#fileSize = offset;
    this.#fragment = this.#openTail = false;
  }

  /** The byte range `[start, end)` of an anchor slice; throws when its anchors are not on the tape. */
  async rangeOf(file: ByteSource, slice: AnchorSlice): Promise<{ start: number; end: number }> {
    let start = 0;
    let end = this.#size;
    if (slice.mode === "last") {
      await this.#extendBackward(file, () => this.#anchorByName.size > 0);
      const mark = this.#anchors.at(-1);
      if (!mark) throw noAnchorsFound();
      start = mark.end;
    } else if (slice.mode === "after") {
      start = (await this.#anchorNamed(file, slice.name)).end;
    } else if (slice.mode === "between") {
      const first = await this.#anchorNamed(file, slice.start);
      const index = this.#anchors.indexOf(first);
      const last = this.#anchors.slice(index + 1).find((mark) => mark.name === slice.end);
      if (!last) throw anchorNotFound(slice.end);
      start = first.end;
      end = last.start;
    }
    return { start, end };
  }

  /** Every line skipped so far, after indexing the whole file. */
  async skippedLines(file: ByteSource): Promise<SkippedLine[]> {
    await this.#extendBackward(file, () => false);
    return [...this.#skipped].map(([offset, reason]) => ({ offset, reason })).sort((a, b) => a.offset - b.offset);
  }

  /** Records a line that is not an entry (once per offset, with a warning). */
  skip(offset: number, reason: string): void {
    if (this.#skipped.has(offset)) return;
    this.#skipped.set(offset, reason);
    log.warn(`tape.line_skipped file=${this.#path} offset=${offset} reason=${reason}`);
  }

  async #anchorNamed(file: ByteSource, name: string): Promise<AnchorMark> {
    await this.#extendBackward(file, () => this.#anchorByName.has(name));
    const mark = this.#anchorByName.get(name);
    if (!mark) throw anchorNotFound(name);
    return mark;
  }

  /** Indexes complete lines written after `size` (by anyone). */
  async #catchUp(file: ByteSource): Promise<void> {
    let start = this.#size;
    if (this.#openTail) {
      const next = await readBytes(file, start, 1);
      if (next[0] === 0x0a) start += 1;
      this.#openTail = false;
    }
    this.#size = await forEachLine(file, start, this.#fileSize, false, (line) => {
      this.#indexLine(line, "forward");
      return true;
    });
    this.#fragmentCheckedAt = -1;
  }

  /** Decides whether the bytes after the last newline are an entry (served) or a fragment. */
  async #checkTail(file: ByteSource): Promise<void> {
    if (this.#fileSize <= this.#size) {
      this.#fragment = false;
      return;
    }
    if (this.#fragmentCheckedAt === this.#fileSize) return;
    this.#fragmentCheckedAt = this.#fileSize;
    const bytes = await readBytes(file, this.#size, this.#fileSize - this.#size);
    const decoded = decodeLine(bytes);
    if (decoded !== null && typeof decoded !== "string") {
      this.#indexEntry(decoded, this.#size, this.#fileSize, "forward");
      this.#size = this.#fileSize;
      this.#openTail = true;
      this.#fragment = false;
    } else {
      this.#fragment = true;
    }
  }

  /** Indexes older lines, newest first, until `done()` or the start of the file. */
  async #extendBackward(file: ByteSource, done: () => boolean): Promise<void> {
    if (this.#from === 0 || done()) return;
    const older: AnchorMark[] = [];
    this.#from = await forEachLineBackward(file, this.#from, (line) => {
      const mark = this.#indexLine(line, "backward");
      if (mark) older.push(mark);
      return !done();
    });
    if (older.length > 0) this.#anchors = older.reverse().concat(this.#anchors);
  }

  #indexLine(line: RawLine, direction: "forward" | "backward"): AnchorMark | undefined {
    const decoded = decodeLine(line.bytes);
    if (decoded === null) return undefined;
    if (typeof decoded === "string") {
      this.skip(line.start, decoded);
      return undefined;
    }
    return this.#indexEntry(decoded, line.start, line.end, direction);
  }

  #indexEntry(entry: TapeEntry, start: number, end: number, direction: "forward" | "backward"): AnchorMark | undefined {
    this.#hasEntries = true;
    if (entry.id > this.#lastId) {
      this.#lastId = entry.id;
      this.#lastDate = entry.date;
    }
    if (entry.kind !== "anchor") return undefined;
    const mark = { name: entry.payload.name, start, end };
    if (direction === "forward") {
      this.#anchors.push(mark);
      this.#anchorByName.set(mark.name, mark);
    } else if (!this.#anchorByName.has(mark.name)) {
      this.#anchorByName.set(mark.name, mark);
    }
    return mark;
  }
}
