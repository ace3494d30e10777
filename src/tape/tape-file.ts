/**
 * One JSONL tape file and what the store knows about it.
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
import { closeSync, constants, fstatSync, openSync, statSync, unlinkSync, writeSync } from "node:fs";
import type { TapeEntry, TapeQuery } from "../kernel/tape-contract.ts";
import { createLogger } from "../kernel/log.ts";
import type { EncodedEntry } from "./entry.ts";
import { createGroupCommit, type GroupCommit } from "./group-commit.ts";
import { decodeLine, forEachLine, forEachLineBackward, lastLineBoundary, readBytes, type RawLine } from "./jsonl-lines.ts";
import { anchorNotFound, anchorSliceOf, compileFilter, noAnchorsFound, runQuery } from "./query-engine.ts";
import { fileStoreError } from "./store-errors.ts";

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

function isMissing(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "ENOENT";
}

/** The state of one tape file; used by the file store only. */
export class TapeFile {
  readonly path: string;
  #fd: number | null = null;
  /** Group commit of the current descriptor (each descriptor has its own). */
  #commit: GroupCommit | null = null;
  #writable = false;
  #ino = -1;
  #dev = -1;
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
  #hasEntries = false;
  #skipped = new Map<number, string>();
  /** The file was created here and its directory entry is not yet synced. */
  #created = false;

  constructor(path: string) {
    this.path = path;
  }

  /** True while a descriptor is open. */
  get open(): boolean {
    return this.#fd !== null;
  }

  /** True while a sync is running on the descriptor. */
  get busy(): boolean {
    return this.#commit?.busy ?? false;
  }

  /** True once, right after the file was created, so the caller can sync the directory. */
  takeCreated(): boolean {
    const created = this.#created;
    this.#created = false;
    return created;
  }

  /** Entries matching `query`, with the shared query semantics. */
  read(query: TapeQuery): TapeEntry[] {
    if (!this.#refresh()) return runQuery([], query);
    const slice = anchorSliceOf(query);
    let start = 0;
    let end = this.#size;
    if (slice.mode === "last") {
      this.#extendBackward(() => this.#anchorByName.size > 0);
      const mark = this.#anchors.at(-1);
      if (!mark) throw noAnchorsFound();
      start = mark.end;
    } else if (slice.mode === "after") {
      start = this.#anchorNamed(slice.name).end;
    } else if (slice.mode === "between") {
      const first = this.#anchorNamed(slice.start);
      const index = this.#anchors.indexOf(first);
      const last = this.#anchors.slice(index + 1).find((mark) => mark.name === slice.end);
      if (!last) throw anchorNotFound(slice.end);
      start = first.end;
      end = last.start;
    }
    const filter = compileFilter(query);
    if (filter.limit === 0) return [];
    const found: TapeEntry[] = [];
    const limit = filter.limit ?? Infinity;
    if (filter.newestFirst) {
      // Newest first: read backwards and stop at the limit.
      this.#readEntriesBackward(start, end, (entry) => {
        if (filter.matches(entry)) found.push(entry);
        return found.length < limit;
      });
      return found;
    }
    this.#readEntries(start, end, (entry) => {
      if (filter.matches(entry)) found.push(entry);
      return found.length < limit;
    });
    return found;
  }

  /**
   * Writes entries with the next ids as one `write`. Call only while holding the directory
   * lock; then await `durable()` (outside the lock) before acknowledging the append.
   */
  appendLocked(batch: readonly EncodedEntry[]): { stored: TapeEntry[]; durable: () => Promise<void> } {
    if (!this.#refresh() || !this.#writable) this.#openForAppend();
    this.#extendBackward(() => this.#hasEntries);
    const firstId = this.#lastId + 1;
    const lines = batch.map((entry, index) => `{"id":${firstId + index},${entry.body}`);
    const separator = this.#fragment || this.#openTail ? "\n" : "";
    const bytes = Buffer.from(`${separator}${lines.join("\n")}\n`, "utf8");
    try {
      for (let written = 0; written < bytes.length; ) written += writeSync(this.#fd!, bytes, written);
    } catch (error) {
      throw fileStoreError(error, "append to", this.path);
    }
    if (this.#fragment) this.#skip(this.#size, "torn line: an earlier write was interrupted");
    let offset = this.#fileSize + separator.length;
    const stored = batch.map((encoded, index) => {
      const start = offset;
      offset += lines[index]!.length - encoded.body.length + encoded.bodyBytes + 1;
      const entry: TapeEntry = { id: firstId + index, ...encoded.value };
      this.#indexEntry(entry, start, offset, "forward");
      return entry;
    });
    this.#size = this.#fileSize = offset;
    this.#fragment = this.#openTail = false;
    const commit = this.#commit!;
    const ticket = commit.noteWrite();
    const durable = async (): Promise<void> => {
      try {
        await commit.flush(ticket);
      } catch (error) {
        throw fileStoreError(error, "flush (fdatasync)", this.path);
      }
    };
    return { stored, durable };
  }

  /** Deletes the file. Call only while holding the directory lock. */
  resetLocked(): void {
    try {
      unlinkSync(this.path);
    } catch (error) {
      if (!isMissing(error)) throw fileStoreError(error, "delete", this.path);
    }
    this.#forget();
  }

  /** Every line skipped so far, after indexing the whole file. */
  skippedLines(): SkippedLine[] {
    if (this.#refresh()) this.#extendBackward(() => false);
    return [...this.#skipped].map(([offset, reason]) => ({ offset, reason })).sort((a, b) => a.offset - b.offset);
  }

  /** Closes the descriptor once no sync needs it; the index is kept. */
  async release(): Promise<void> {
    await this.#commit?.idle();
    this.#closeFd();
  }

  #anchorNamed(name: string): AnchorMark {
    this.#extendBackward(() => this.#anchorByName.has(name));
    const mark = this.#anchorByName.get(name);
    if (!mark) throw anchorNotFound(name);
    return mark;
  }

  /** Brings the index up to date with the file; false when the file does not exist. */
  #refresh(): boolean {
    let stats;
    try {
      stats = statSync(this.path);
    } catch (error) {
      if (isMissing(error)) {
        this.#forget();
        return false;
      }
      throw fileStoreError(error, "read", this.path);
    }
    let size = stats.size;
    if (this.#fd !== null && (stats.ino !== this.#ino || stats.dev !== this.#dev)) this.#forget();
    if (this.#fd === null) {
      if (!this.#openExisting()) {
        this.#forget();
        return false;
      }
      size = fstatSync(this.#fd!).size;
    }
    if (size < this.#size) this.#clearIndex();
    this.#fileSize = size;
    if (!this.#ready) {
      this.#from = this.#size = lastLineBoundary(this.#fd!, size);
      this.#ready = true;
    } else if (size > this.#size) {
      this.#catchUp();
    }
    this.#checkTail();
    return true;
  }

  #openExisting(): boolean {
    for (const [flags, writable] of [
      [constants.O_RDWR | constants.O_APPEND, true],
      [constants.O_RDONLY, false],
    ] as const) {
      try {
        this.#adopt(openSync(this.path, flags), writable);
        return true;
      } catch (error) {
        if (isMissing(error)) return false;
        const code = (error as { code?: string }).code;
        if (!writable || (code !== "EACCES" && code !== "EROFS" && code !== "EPERM")) throw fileStoreError(error, "open", this.path);
      }
    }
    return false;
  }

  #openForAppend(): void {
    this.#closeFd();
    let fd: number;
    try {
      fd = openSync(this.path, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_EXCL, 0o644);
      this.#created = true;
    } catch (error) {
      if ((error as { code?: string }).code !== "EEXIST") throw fileStoreError(error, "create", this.path);
      try {
        fd = openSync(this.path, constants.O_RDWR | constants.O_APPEND);
      } catch (inner) {
        throw fileStoreError(inner, "open for appending", this.path);
      }
    }
    this.#adopt(fd, true);
    this.#refresh();
  }

  /** Takes `fd` as the descriptor; the index survives only if it is still the same file. */
  #adopt(fd: number, writable: boolean): void {
    const stats = fstatSync(fd);
    if (stats.ino !== this.#ino || stats.dev !== this.#dev) this.#clearIndex();
    this.#fd = fd;
    this.#commit = createGroupCommit(fd);
    this.#writable = writable;
    this.#ino = stats.ino;
    this.#dev = stats.dev;
  }

  #closeFd(): void {
    const fd = this.#fd;
    const commit = this.#commit;
    this.#fd = null;
    this.#commit = null;
    this.#writable = false;
    if (fd === null) return;
    const close = (): void => {
      try {
        closeSync(fd);
      } catch (error) {
        log.debug(`tape.close_failed file=${this.path}`, error);
      }
    };
    if (commit?.busy) void commit.idle().then(close);
    else close();
  }

  #forget(): void {
    this.#closeFd();
    this.#clearIndex();
    this.#ino = this.#dev = -1;
  }

  #clearIndex(): void {
    this.#ready = false;
    this.#from = this.#size = this.#fileSize = 0;
    this.#openTail = this.#fragment = this.#hasEntries = false;
    this.#fragmentCheckedAt = -1;
    this.#anchors = [];
    this.#anchorByName = new Map();
    this.#lastId = 0;
    this.#skipped = new Map();
  }

  /** Indexes complete lines written after `size` (by anyone). */
  #catchUp(): void {
    let start = this.#size;
    if (this.#openTail) {
      const next = readBytes(this.#fd!, start, 1);
      if (next[0] === 0x0a) start += 1;
      this.#openTail = false;
    }
    this.#size = forEachLine(this.#fd!, start, this.#fileSize, false, (line) => {
      this.#indexLine(line, "forward");
      return true;
    });
    this.#fragmentCheckedAt = -1;
  }

  /** Decides whether the bytes after the last newline are an entry (served) or a fragment. */
  #checkTail(): void {
    if (this.#fileSize <= this.#size) {
      this.#fragment = false;
      return;
    }
    if (this.#fragmentCheckedAt === this.#fileSize) return;
    this.#fragmentCheckedAt = this.#fileSize;
    const bytes = readBytes(this.#fd!, this.#size, this.#fileSize - this.#size);
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
  #extendBackward(done: () => boolean): void {
    if (this.#from === 0 || done()) return;
    const older: AnchorMark[] = [];
    this.#from = forEachLineBackward(this.#fd!, this.#from, (line) => {
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
      this.#skip(line.start, decoded);
      return undefined;
    }
    return this.#indexEntry(decoded, line.start, line.end, direction);
  }

  #indexEntry(entry: TapeEntry, start: number, end: number, direction: "forward" | "backward"): AnchorMark | undefined {
    this.#hasEntries = true;
    if (entry.id > this.#lastId) this.#lastId = entry.id;
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

  /** Decodes one line and hands its entry to `visit`; blank lines pass, bad ones are skipped with a warning. */
  #visitLine(line: { start: number; bytes: Buffer }, visit: (entry: TapeEntry) => boolean): boolean {
    const decoded = decodeLine(line.bytes);
    if (decoded === null) return true;
    if (typeof decoded === "string") {
      this.#skip(line.start, decoded);
      return true;
    }
    return visit(decoded);
  }

  #readEntries(start: number, end: number, visit: (entry: TapeEntry) => boolean): void {
    if (start >= end) return;
    forEachLine(this.#fd!, start, end, true, (line) => this.#visitLine(line, visit));
  }

  #readEntriesBackward(start: number, end: number, visit: (entry: TapeEntry) => boolean): void {
    if (start >= end) return;
    const tail = end === this.#size && this.#openTail ? this.#tailStart() : end;
    if (tail < end) {
      // The last entry has no newline yet; the backward reader only sees whole lines.
      let keepGoing = true;
      this.#readEntries(tail, end, (entry) => (keepGoing = visit(entry)));
      if (!keepGoing) return;
    }
    forEachLineBackward(
      this.#fd!,
      tail,
      (line) => this.#visitLine(line, visit),
      start,
    );
  }

  /** Where the unterminated last entry starts (just after the last newline). */
  #tailStart(): number {
    return lastLineBoundary(this.#fd!, this.#size);
  }

  #skip(offset: number, reason: string): void {
    if (this.#skipped.has(offset)) return;
    this.#skipped.set(offset, reason);
    log.warn(`tape.line_skipped file=${this.path} offset=${offset} reason=${reason}`);
  }
}
