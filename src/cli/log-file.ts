/**
 * The `bub` command line's log file, `<BUB_HOME>/logs/bub.log`, rotated by size: when the
 * next write would take it past `maxBytes`, `bub.log.1` becomes `bub.log.2` (and so on up to
 * `files - 1`), `bub.log` becomes `bub.log.1`, and a new `bub.log` starts. Writes go through
 * fs promises in the order they were made, several records coalescing into one append on a
 * file kept open (reopened after a rotation, closed by {@link RotatingLogFile.close}); with
 * `gatherMs`, records wait that long for others, so a burst is one write; nothing blocks the
 * caller, and a file that cannot be written is given up silently.
 *
 * A record stays queued until its write has ended, so {@link RotatingLogFile.writeQueuedSync}
 * can still append, synchronously, what a `process.exit()` would otherwise cut off (the
 * command line calls it on the process's `exit` event). A crash (kill -9, a fatal error)
 * loses the records not written yet.
 */
import { appendFileSync } from "node:fs";
import { open, rename, stat, writeFile, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { makeDirectory, makeDirectoryAsync, PRIVATE_FILE_MODE } from "../config/home-dir.ts";
import { errorCode } from "../config/thrown.ts";

/** Options of {@link RotatingLogFile}. */
export interface RotatingLogFileOptions {
  /** Largest size of one file (default 5 MiB). */
  readonly maxBytes?: number;
  /** Files kept, the current one included (default 3: bub.log, bub.log.1, bub.log.2). */
  readonly files?: number;
  /**
   * How long a record may wait for others before the file is written (default 0: at once).
   * A busy gateway logs a few records per message; gathering them for a few milliseconds
   * makes one write of many, instead of one per record. {@link RotatingLogFile.flush},
   * `close` and {@link RotatingLogFile.writeQueuedSync} do not wait.
   */
  readonly gatherMs?: number;
}

/** An append-only log file rotated by size (see the module comment). */
export class RotatingLogFile {
  readonly path: string;
  readonly maxBytes: number;
  readonly files: number;
  /** Records not written yet, oldest first; the first {@link #taken} of them are being written. */
  #pending: string[] = [];
  #taken = 0;
  #draining: Promise<void> | null = null;
  #size: number | null = null;
  #broken = false;
  #handle: FileHandle | null = null;
  readonly #gatherMs: number;
  /** The timer that starts the next write, while records gather. */
  #gathering: NodeJS.Timeout | null = null;

  constructor(path: string, options: RotatingLogFileOptions = {}) {
    this.path = path;
    this.maxBytes = options.maxBytes ?? 5 * 1024 * 1024;
    this.files = Math.max(1, options.files ?? 3);
    this.#gatherMs = Math.max(0, options.gatherMs ?? 0);
  }

  /** Queues `text` (whole lines) for the file. */
  append(text: string): void {
    if (this.#broken || text === "") return;
    this.#pending.push(text);
    if (this.#draining || this.#gathering) return;
    if (this.#gatherMs === 0) this.#startDrain();
    else this.#gathering = setTimeout(() => this.#startDrain(), this.#gatherMs).unref();
  }

  #startDrain(): void {
    if (this.#gathering) clearTimeout(this.#gathering);
    this.#gathering = null;
    this.#draining ??= this.#drain().finally(() => {
      this.#draining = null;
    });
  }

  /** Resolves once everything appended so far is written (or given up). */
  async flush(): Promise<void> {
    if (this.#gathering) this.#startDrain();
    while (this.#draining) await this.#draining;
  }

  /** Flushes, then closes the file (a later append opens it again). */
  async close(): Promise<void> {
    await this.flush();
    const handle = this.#handle;
    this.#handle = null;
    await handle?.close().catch(() => undefined);
  }

  /**
   * Appends the records still queued (those being written included) at once, synchronously,
   * and stops writing: for the process's `exit` event, after which no asynchronous write
   * runs. A record whose write the exit raced may appear twice.
   */
  writeQueuedSync(): void {
    if (this.#gathering) clearTimeout(this.#gathering);
    this.#gathering = null;
    if (this.#broken || this.#pending.length === 0) return;
    const text = this.#pending.join("");
    this.#broken = true;
    this.#pending = [];
    this.#taken = 0;
    try {
      makeDirectory(dirname(this.path));
      appendFileSync(this.path, text, { mode: PRIVATE_FILE_MODE });
    } catch {
      // As in #drain: no log file must not change how the command ends.
    }
  }

  async #drain(): Promise<void> {
    try {
      while (this.#pending.length > this.#taken) {
        const batch = this.#pending.slice(this.#taken);
        this.#taken = this.#pending.length;
        await this.#writeBatch(batch);
      }
    } catch {
      // No log file (a read-only home, a full disk) must not stop the command.
      this.#broken = true;
      this.#pending = [];
      this.#taken = 0;
    }
  }

  /** Appends the records in as few writes as the size limit allows, rotating between them. */
  async #writeBatch(records: readonly string[]): Promise<void> {
    if (this.#size === null) {
      await makeDirectoryAsync(dirname(this.path));
      this.#size = await sizeOf(this.path);
    }
    let chunk = "";
    let chunkBytes = 0;
    let chunkRecords = 0;
    for (const record of records) {
      const bytes = Buffer.byteLength(record);
      if (this.#size + chunkBytes > 0 && this.#size + chunkBytes + bytes > this.maxBytes) {
        if (chunkBytes > 0) await this.#append(chunk, chunkBytes, chunkRecords);
        chunk = "";
        chunkBytes = 0;
        chunkRecords = 0;
        // Another process may have rotated it already: look before moving files, and write
        // to the file now at the path rather than the one this handle still holds.
        this.#size = await sizeOf(this.path);
        await this.#forgetIfMoved();
        if (this.#size > 0 && this.#size + bytes > this.maxBytes) {
          await this.#rotate();
          this.#size = 0;
        }
      }
      chunk += record;
      chunkBytes += bytes;
      chunkRecords++;
    }
    if (chunkBytes > 0) await this.#append(chunk, chunkBytes, chunkRecords);
  }

  /** Writes `records` records (`text`, `bytes` long) and takes them off the queue. */
  async #append(text: string, bytes: number, records: number): Promise<void> {
    this.#handle ??= await open(this.path, "a", PRIVATE_FILE_MODE);
    if (this.#broken) return; // writeQueuedSync wrote them (or the file was given up)
    await this.#handle.write(text);
    this.#size = (this.#size ?? 0) + bytes;
    if (this.#broken) return; // writeQueuedSync took them already
    this.#pending.splice(0, records);
    this.#taken -= records;
  }

  async #forgetIfMoved(): Promise<void> {
    const handle = this.#handle;
    if (!handle) return;
    const [held, current] = await Promise.all([handle.stat(), stat(this.path).catch(() => null)]);
    if (current && held.ino === current.ino && held.dev === current.dev) return;
    this.#handle = null;
    await handle.close();
  }

  async #rotate(): Promise<void> {
    const handle = this.#handle;
    this.#handle = null;
    await handle?.close();
    for (let index = this.files - 1; index >= 1; index--) {
      const from = index === 1 ? this.path : `${this.path}.${index - 1}`;
      await rename(from, `${this.path}.${index}`).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") throw error;
      });
    }
    if (this.files === 1) await writeFile(this.path, "", { mode: PRIVATE_FILE_MODE });
  }
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    if (errorCode(error) === "ENOENT") return 0;
    throw error;
  }
}
