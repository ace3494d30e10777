/**
 * One JSONL tape file as the file store uses it: its descriptor (reopened when the file is
 * replaced or deleted, read-only when it cannot be written), appends with the next ids under
 * the store's lock, and resets. What is known about its content is kept in a {@link TapeIndex}.
 */
import { closeSync, constants, fstatSync, open as openCallback, openSync, statSync, unlinkSync, writeSync } from "node:fs";
import { promisify } from "node:util";
import type { TapeEntry, TapeQuery } from "../kernel/tape-contract.ts";
import { BubError } from "../kernel/errors.ts";
import { createLogger } from "../kernel/log.ts";
import type { EncodedEntry } from "./entry.ts";
import { createGroupCommit, type GroupCommit } from "./group-commit.ts";
import { runQuery } from "./query-engine.ts";
import { fileStoreError } from "./store-errors.ts";
import { TapeIndex, type AppendedLine, type SkippedLine } from "./tape-index.ts";
import { readTape } from "./tape-read.ts";
import { errorCode } from "../config/thrown.ts";
import { PRIVATE_FILE_MODE } from "../config/home-dir.ts";

export type { SkippedLine } from "./tape-index.ts";

const log = createLogger("bub:tape");
const openAsync = promisify(openCallback);

function isMissing(error: unknown): boolean {
  return errorCode(error) === "ENOENT";
}

/** An open descriptor of the file. */
interface Descriptor {
  readonly fd: number;
  /** Group commit of this descriptor (each descriptor has its own). */
  readonly commit: GroupCommit;
  readonly writable: boolean;
}

/** The state of one tape file; used by the file store only. */
export class TapeFile {
  readonly path: string;
  #open: Descriptor | null = null;
  #ino = -1;
  #dev = -1;
  readonly #index: TapeIndex;
  /** The file was created here and its directory entry is not yet synced. */
  #created = false;

  constructor(path: string) {
    this.path = path;
    this.#index = new TapeIndex(path);
  }

  /** True while a descriptor is open. */
  get open(): boolean {
    return this.#open !== null;
  }

  /** True while a sync is running on the descriptor. */
  get busy(): boolean {
    return this.#open?.commit.busy ?? false;
  }

  /**
   * Opens the file for appending off the event loop (creating it when missing), so that
   * {@link appendLocked} finds it open; opening, and above all creating, a file can wait on
   * the disk. Call outside the directory lock; a no-op when it is open for writing already.
   */
  async openForAppend(): Promise<void> {
    if (this.#open?.writable) return;
    let fd: number;
    let created = false;
    try {
      fd = await openAsync(this.path, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_EXCL, PRIVATE_FILE_MODE);
      created = true;
    } catch (error) {
      if (errorCode(error) !== "EEXIST") throw fileStoreError(error, "create", this.path);
      try {
        fd = await openAsync(this.path, constants.O_RDWR | constants.O_APPEND);
      } catch (inner) {
        throw fileStoreError(inner, "open for appending", this.path);
      }
    }
    if (this.#open?.writable) {
      // Another append opened it meanwhile: keep that descriptor.
      closeSync(fd);
      return;
    }
    this.#closeFd();
    this.#adopt(fd, true);
    if (created) this.#created = true;
  }

  /** True once, right after the file was created, so the caller can sync the directory. */
  takeCreated(): boolean {
    const created = this.#created;
    this.#created = false;
    return created;
  }

  /** Entries matching `query`, with the shared query semantics. */
  read(query: TapeQuery): TapeEntry[] {
    const open = this.#refresh();
    if (!open) return runQuery([], query);
    return readTape(open.fd, this.#index, query);
  }

  /**
   * Writes entries with the next ids as one `write`. Call only while holding the directory
   * lock; then await `durable()` (outside the lock) before acknowledging the append.
   */
  appendLocked(batch: readonly EncodedEntry[]): { stored: TapeEntry[]; durable: () => Promise<void> } {
    let open = this.#refresh();
    if (!open?.writable) open = this.#openForAppend();
    const { fd, commit } = open;
    const firstId = this.#index.nextId(fd);
    const lines = batch.map((entry, index) => `{"id":${firstId + index},${entry.body}`);
    const separator = this.#index.needsSeparator ? "\n" : "";
    const bytes = Buffer.from(`${separator}${lines.join("\n")}\n`, "utf8");
    try {
      for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written);
    } catch (error) {
      throw fileStoreError(error, "append to", this.path);
    }
    const stored: TapeEntry[] = [];
    const appended: AppendedLine[] = batch.map((encoded, index) => {
      const entry: TapeEntry = { id: firstId + index, ...encoded.value };
      stored.push(entry);
      return { entry, lineBytes: lines[index].length - encoded.body.length + encoded.bodyBytes + 1 };
    });
    this.#index.recordAppend(separator.length, appended);
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
    const open = this.#refresh();
    return open ? this.#index.skippedLines(open.fd) : [];
  }

  /** Closes the descriptor once no sync needs it; the index is kept. */
  async release(): Promise<void> {
    await this.#open?.commit.idle();
    this.#closeFd();
  }

  /** Brings the index up to date with the file and returns its descriptor; null when the file does not exist. */
  #refresh(): Descriptor | null {
    let stats;
    try {
      stats = statSync(this.path);
    } catch (error) {
      if (isMissing(error)) {
        this.#forget();
        return null;
      }
      throw fileStoreError(error, "read", this.path);
    }
    let size = stats.size;
    if (this.#open !== null && (stats.ino !== this.#ino || stats.dev !== this.#dev)) this.#forget();
    let open = this.#open;
    if (open === null) {
      open = this.#openExisting();
      if (open === null) {
        this.#forget();
        return null;
      }
      size = fstatSync(open.fd).size;
    }
    this.#index.update(open.fd, size);
    return open;
  }

  /** Opens the existing file, for writing where allowed; null when it does not exist. */
  #openExisting(): Descriptor | null {
    for (const [flags, writable] of [
      [constants.O_RDWR | constants.O_APPEND, true],
      [constants.O_RDONLY, false],
    ] as const) {
      try {
        return this.#adopt(openSync(this.path, flags), writable);
      } catch (error) {
        if (isMissing(error)) return null;
        const code = errorCode(error);
        if (!writable || (code !== "EACCES" && code !== "EROFS" && code !== "EPERM")) throw fileStoreError(error, "open", this.path);
      }
    }
    return null;
  }

  /** Opens the file for appending, creating it when missing, and brings the index up to date. */
  #openForAppend(): Descriptor {
    this.#closeFd();
    let fd: number;
    try {
      fd = openSync(this.path, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_EXCL, PRIVATE_FILE_MODE);
      this.#created = true;
    } catch (error) {
      if (errorCode(error) !== "EEXIST") throw fileStoreError(error, "create", this.path);
      try {
        fd = openSync(this.path, constants.O_RDWR | constants.O_APPEND);
      } catch (inner) {
        throw fileStoreError(inner, "open for appending", this.path);
      }
    }
    this.#adopt(fd, true);
    const open = this.#refresh();
    // Only a process that deletes tape files without the directory lock gets here.
    if (!open) throw new BubError("temporary", `Tape file ${this.path} was deleted while it was being opened for appending: retry.`, { details: { path: this.path } });
    return open;
  }

  /** Takes `fd` as the descriptor; the index survives only if it is still the same file. */
  #adopt(fd: number, writable: boolean): Descriptor {
    const stats = fstatSync(fd);
    if (stats.ino !== this.#ino || stats.dev !== this.#dev) this.#index.clear();
    this.#open = { fd, commit: createGroupCommit(fd), writable };
    this.#ino = stats.ino;
    this.#dev = stats.dev;
    return this.#open;
  }

  #closeFd(): void {
    const open = this.#open;
    this.#open = null;
    if (open === null) return;
    const { fd, commit } = open;
    const close = (): void => {
      try {
        closeSync(fd);
      } catch (error) {
        log.debug(`tape.close_failed file=${this.path}`, error);
      }
    };
    if (commit.busy) void commit.idle().then(close);
    else close();
  }

  #forget(): void {
    this.#closeFd();
    this.#index.clear();
    this.#ino = this.#dev = -1;
  }
}
