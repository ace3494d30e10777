/**
 * One JSONL tape file as the file store uses it: its open handle (reopened when the file is
 * replaced or deleted, read-only when it cannot be written), appends with the next ids under
 * the store's lock, and resets. What is known about its content is kept in a {@link TapeIndex}.
 *
 * Every file-system call is asynchronous (a `FileHandle`, `fs/promises`), so a busy gateway
 * never waits on the disk on its event loop. The work that reads or moves the index (a read,
 * an append, a reset, a release) runs one piece at a time per file, in the order asked.
 */
import { constants } from "node:fs";
import { open as openFile, stat, unlink, type FileHandle } from "node:fs/promises";
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

const APPEND = constants.O_RDWR | constants.O_APPEND;
const CREATE = APPEND | constants.O_CREAT | constants.O_EXCL;

/** The tail of a queue of work: settled, holding no result. */
function settledWithNothing(): void {}

function isMissing(error: unknown): boolean {
  return errorCode(error) === "ENOENT";
}

/** An open handle of the file. */
interface Opened {
  readonly handle: FileHandle;
  /** Group commit of this handle (each handle has its own). */
  readonly commit: GroupCommit;
  readonly writable: boolean;
}

/** What one locked append wrote: the entries as stored, and how to wait for their sync. */
export interface LockedAppend {
  readonly stored: TapeEntry[];
  /** Resolves once the write is on disk (`fdatasync`, shared with the other writes in flight). */
  readonly durable: () => Promise<void>;
}

/** The state of one tape file; used by the file store only. */
export class TapeFile {
  readonly path: string;
  #open: Opened | null = null;
  #ino = -1;
  #dev = -1;
  readonly #index: TapeIndex;
  /** The file was created here and its directory entry is not yet synced. */
  #created = false;
  /** The last piece of work queued on this file. */
  #queue: Promise<unknown> = Promise.resolve();
  /** Calls of the store in progress on this file (see {@link use}). */
  #users = 0;

  constructor(path: string) {
    this.path = path;
    this.#index = new TapeIndex(path);
  }

  /** True while a handle is open. */
  get open(): boolean {
    return this.#open !== null;
  }

  /** True while a call uses the file or a sync is running on its handle. */
  get busy(): boolean {
    return this.#users > 0 || (this.#open?.commit.busy ?? false);
  }

  /** Runs `work` with the file marked {@link busy}, so the store neither closes nor forgets it meanwhile. */
  async use<T>(work: () => Promise<T>): Promise<T> {
    this.#users++;
    try {
      return await work();
    } finally {
      this.#users--;
    }
  }

  /**
   * Opens the file for appending (creating it when missing), so that {@link appendLocked}
   * finds it open; opening, and above all creating, a file can wait on the disk. Call outside
   * the directory lock; a no-op when it is open for writing already.
   */
  openForAppend(): Promise<void> {
    if (this.#open?.writable) return Promise.resolve();
    return this.#serial(async () => {
      if (!this.#open?.writable) await this.#openHandleForAppend();
    });
  }

  /** True once, right after the file was created, so the caller can sync the directory. */
  takeCreated(): boolean {
    const created = this.#created;
    this.#created = false;
    return created;
  }

  /** Entries matching `query`, with the shared query semantics. */
  read(query: TapeQuery): Promise<TapeEntry[]> {
    return this.#serial(async () => {
      const open = await this.#refresh();
      if (!open) return runQuery([], query);
      return readTape(open.handle, this.#index, query);
    });
  }

  /** Whether the file still ends with the entry `end` names, from the index (a read only when another process wrote since). */
  endsAt(end: { readonly id: number; readonly date: string }): Promise<boolean> {
    return this.#serial(async () => {
      if ((await this.#refresh()) === null) return false;
      const last = this.#index.lastEntry;
      return last !== null && last.id === end.id && last.date === end.date;
    });
  }

  /**
   * Writes entries with the next ids as one `write`. Call only while holding the directory
   * lock; then await `durable()` (outside the lock) before acknowledging the append.
   */
  appendLocked(batch: readonly EncodedEntry[]): Promise<LockedAppend> {
    return this.#serial(async () => {
      let open = await this.#refresh();
      if (!open?.writable) {
        await this.#openHandleForAppend();
        open = await this.#refresh();
        // Only a process that deletes tape files without the directory lock gets here.
        if (!open) throw new BubError("temporary", `Tape file ${this.path} was deleted while it was being opened for appending: retry.`, { details: { path: this.path } });
      }
      const { handle, commit } = open;
      const firstId = await this.#index.nextId(handle);
      const lines = batch.map((entry, index) => `{"id":${firstId + index},${entry.body}`);
      const separator = this.#index.needsSeparator ? "\n" : "";
      const bytes = Buffer.from(`${separator}${lines.join("\n")}\n`, "utf8");
      try {
        for (let written = 0; written < bytes.length; ) written += (await handle.write(bytes, written, bytes.length - written)).bytesWritten;
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
    });
  }

  /** Deletes the file. Call only while holding the directory lock. */
  resetLocked(): Promise<void> {
    return this.#serial(async () => {
      try {
        await unlink(this.path);
      } catch (error) {
        if (!isMissing(error)) throw fileStoreError(error, "delete", this.path);
      }
      this.#forget();
    });
  }

  /** Every line skipped so far, after indexing the whole file. */
  skippedLines(): Promise<SkippedLine[]> {
    return this.#serial(async () => {
      const open = await this.#refresh();
      return open ? this.#index.skippedLines(open.handle) : [];
    });
  }

  /** Closes the handle once no sync needs it; the index is kept. */
  release(): Promise<void> {
    return this.#serial(async () => {
      await this.#open?.commit.idle();
      this.#closeHandle();
    });
  }

  /**
   * Runs `work` after every piece of work queued on this file before it. The queue's tail
   * settles with nothing: holding the last result (an append's entries, lines and closures)
   * until the file's next call would keep a turn's writes alive for as long as its chat is quiet.
   */
  #serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work);
    this.#queue = run.then(settledWithNothing, settledWithNothing);
    return run;
  }

  /** Brings the index up to date with the file and returns its handle; null when the file does not exist. */
  async #refresh(): Promise<Opened | null> {
    let stats;
    try {
      stats = await stat(this.path);
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
      const opened = await this.#openExisting();
      if (opened === null) {
        this.#forget();
        return null;
      }
      ({ open, size } = opened);
    }
    await this.#index.update(open.handle, size);
    return open;
  }

  /** Opens the existing file, for writing where allowed; null when it does not exist. */
  async #openExisting(): Promise<{ open: Opened; size: number } | null> {
    for (const [flags, writable] of [
      [APPEND, true],
      [constants.O_RDONLY, false],
    ] as const) {
      try {
        return await this.#adopt(await openFile(this.path, flags), writable);
      } catch (error) {
        if (isMissing(error)) return null;
        const code = errorCode(error);
        if (!writable || (code !== "EACCES" && code !== "EROFS" && code !== "EPERM")) throw fileStoreError(error, "open", this.path);
      }
    }
    return null;
  }

  /** Opens the file for appending, creating it when missing; the index is brought up to date by the next refresh. */
  async #openHandleForAppend(): Promise<void> {
    this.#closeHandle();
    let handle: FileHandle;
    try {
      handle = await openFile(this.path, CREATE, PRIVATE_FILE_MODE);
      this.#created = true;
    } catch (error) {
      if (errorCode(error) !== "EEXIST") throw fileStoreError(error, "create", this.path);
      try {
        handle = await openFile(this.path, APPEND);
      } catch (inner) {
        throw fileStoreError(inner, "open for appending", this.path);
      }
    }
    await this.#adopt(handle, true);
  }

  /** Takes `handle` as the file's; the index survives only if it is still the same file. */
  async #adopt(handle: FileHandle, writable: boolean): Promise<{ open: Opened; size: number }> {
    let stats;
    try {
      stats = await handle.stat();
    } catch (error) {
      await handle.close().catch(() => undefined);
      throw error;
    }
    if (stats.ino !== this.#ino || stats.dev !== this.#dev) this.#index.clear();
    const open: Opened = { handle, commit: createGroupCommit(handle.fd), writable };
    this.#open = open;
    this.#ino = stats.ino;
    this.#dev = stats.dev;
    return { open, size: stats.size };
  }

  /** Closes the handle in the background, after any sync that uses it. */
  #closeHandle(): void {
    const open = this.#open;
    this.#open = null;
    if (open === null) return;
    void open.commit
      .idle()
      .then(() => open.handle.close())
      .catch((error: unknown) => log.debug(`tape.close_failed file=${this.path}`, error));
  }

  #forget(): void {
    this.#closeHandle();
    this.#index.clear();
    this.#ino = this.#dev = -1;
  }
}
