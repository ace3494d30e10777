/**
 * The `bub` command line's log file, `<BUB_HOME>/logs/bub.log`, rotated by size: when the
 * next write would take it past `maxBytes`, `bub.log.1` becomes `bub.log.2` (and so on up to
 * `files - 1`), `bub.log` becomes `bub.log.1`, and a new `bub.log` starts. Writes go through
 * fs promises in the order they were made, several records coalescing into one append on a
 * file kept open (reopened after a rotation, closed by {@link RotatingLogFile.close}); nothing
 * blocks the caller, and a file that cannot be written is given up silently.
 */
import { open, rename, stat, writeFile, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { makeDirectoryAsync, PRIVATE_FILE_MODE } from "../config/home-dir.ts";
import { errorCode } from "../config/thrown.ts";

/** Options of {@link RotatingLogFile}. */
export interface RotatingLogFileOptions {
  /** Largest size of one file (default 5 MiB). */
  readonly maxBytes?: number;
  /** Files kept, the current one included (default 3: bub.log, bub.log.1, bub.log.2). */
  readonly files?: number;
}

/** An append-only log file rotated by size (see the module comment). */
export class RotatingLogFile {
  readonly path: string;
  readonly maxBytes: number;
  readonly files: number;
  #pending: string[] = [];
  #draining: Promise<void> | null = null;
  #size: number | null = null;
  #broken = false;
  #handle: FileHandle | null = null;

  constructor(path: string, options: RotatingLogFileOptions = {}) {
    this.path = path;
    this.maxBytes = options.maxBytes ?? 5 * 1024 * 1024;
    this.files = Math.max(1, options.files ?? 3);
  }

  /** Queues `text` (whole lines) for the file. */
  append(text: string): void {
    if (this.#broken) return;
    this.#pending.push(text);
    this.#draining ??= this.#drain().finally(() => {
      this.#draining = null;
    });
  }

  /** Resolves once everything appended so far is written (or given up). */
  async flush(): Promise<void> {
    while (this.#draining) await this.#draining;
  }

  /** Flushes, then closes the file (a later append opens it again). */
  async close(): Promise<void> {
    await this.flush();
    const handle = this.#handle;
    this.#handle = null;
    await handle?.close().catch(() => undefined);
  }

  async #drain(): Promise<void> {
    try {
      while (this.#pending.length > 0) {
        const batch = this.#pending;
        this.#pending = [];
        await this.#writeBatch(batch);
      }
    } catch {
      // No log file (a read-only home, a full disk) must not stop the command.
      this.#broken = true;
      this.#pending = [];
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
    for (const record of records) {
      const bytes = Buffer.byteLength(record);
      if (this.#size + chunkBytes > 0 && this.#size + chunkBytes + bytes > this.maxBytes) {
        if (chunkBytes > 0) await this.#append(chunk, chunkBytes);
        chunk = "";
        chunkBytes = 0;
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
    }
    if (chunkBytes > 0) await this.#append(chunk, chunkBytes);
  }

  async #append(text: string, bytes: number): Promise<void> {
    this.#handle ??= await open(this.path, "a", PRIVATE_FILE_MODE);
    await this.#handle.write(text);
    this.#size = (this.#size ?? 0) + bytes;
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
