import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { BubError } from "../kernel/errors.ts";
import type { NewTapeEntry, TapeEnd, TapeEntry, TapeNameRecord, TapeQuery, TapeStats } from "../kernel/tape-contract.ts";
import { encodeNewEntry, type EncodedEntry } from "./entry.ts";
import { createFileNameIndex } from "./file-name-index.ts";
import { scanTapeFiles } from "./file-tape-stats.ts";
import { makeDirectoryAsync, syncDirectory } from "../config/home-dir.ts";
import { createProcessLock } from "./process-lock.ts";
import { fileStoreError } from "./store-errors.ts";
import { onlyEntry, type EncodedAppendStore } from "./append-many.ts";
import { errorCode } from "../config/thrown.ts";
import { TapeFile, type LockedAppend, type SkippedLine } from "./tape-file.ts";

export type { SkippedLine } from "./tape-file.ts";

/** Options of {@link createFileTapeStore}. */
export interface FileTapeStoreOptions {
  /** Where the `<tape>.jsonl` files live; created on the first append. */
  directory: string;
  /** How long an append waits for another process holding the directory lock (default 30 s). */
  lockTimeoutMs?: number;
  /**
   * How long the directory lock is kept after a write round, for the next ones, once three
   * rounds began within this long (default {@link LOCK_LINGER_MS}); another process waiting
   * for it gets it within about that long. 0 lets go after every round.
   */
  lockLingerMs?: number;
  /**
   * Descriptors kept open at most; the least recently used idle ones are closed (default 1024).
   * A busy gateway touches every chat's tape in turn, so a bound below the number of active
   * chats would reopen a file on nearly every read and append; Node raises the process's
   * open-file limit to its hard limit at start, which leaves room for this many.
   */
  maxOpenFiles?: number;
}

/** The JSONL file store: a {@link TapeStore} plus what it can tell about its files. */
export interface FileTapeStore extends EncodedAppendStore, AsyncDisposable {
  /** The directory holding the tape files. */
  readonly directory: string;
  appendBatch(tape: string, entries: readonly NewTapeEntry[]): Promise<TapeEntry[]>;
  close(): Promise<void>;
  /** Lines of a tape's file that are not entries (torn writes, foreign data); each was logged once. */
  skippedLines(tape: string): Promise<SkippedLine[]>;
  /** Appends to `.index.jsonl` in the directory (see `file-name-index.ts`). */
  recordTapeName(record: TapeNameRecord): Promise<void>;
  tapeNames(): Promise<TapeNameRecord[]>;
  /** Read from the files as bytes (see `file-tape-stats.ts`). */
  tapeStats(): Promise<TapeStats[]>;
  /** From the file's index, after a `stat` of the file (a read only when another process wrote to it). */
  endsAt(end: TapeEnd): Promise<boolean>;
}

/** The name of the lock database inside a tapes directory. */
export const TAPE_LOCK_FILE = ".tapes.lock";

/** The default of {@link FileTapeStoreOptions.lockLingerMs}. */
export const LOCK_LINGER_MS = 50;

function checkTapeName(tape: string): void {
  if (typeof tape !== "string" || tape === "" || tape === "." || tape === ".." || /[/\\\0]/.test(tape) || tape.length > 200) {
    throw new BubError("invalid_input", `Tape name ${JSON.stringify(tape)} cannot be used as a file name: use up to 200 characters without '/', '\\' or NUL.`);
  }
}

function isListedStem(stem: string): boolean {
  return stem.split("__").length === 2;
}

/** One append waiting for the next write round. */
interface WaitingAppend {
  readonly file: TapeFile;
  readonly entries: readonly EncodedEntry[];
  readonly resolve: (written: LockedAppend) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * The default store: one `<tape>.jsonl` file per tape under `directory`, one JSON entry per
 * line in the reference runtime's format, so tapes move freely between the two runtimes.
 *
 * - **Several processes** may append to one tape: appends take a directory-wide lock (an OS
 *   record lock that dies with its process, see `process-lock.ts`), read any bytes other
 *   processes added, and only then assign ids, so ids stay unique and increasing. A store
 *   that writes often keeps the lock between its rounds, and lets go when it pauses or
 *   another process asks for it (`lockLingerMs`).
 * - **Durability**: an append resolves only after `fdatasync` of the file (and of the
 *   directory when the file was just created). Appends made while a write round is running
 *   wait for the next round, which takes the lock once and writes each file's entries with one
 *   `write`; then each file gets one sync, shared by every write in flight (group commit).
 * - **Nothing blocks the event loop**: every file-system call is asynchronous; each entry is
 *   encoded once, before the round.
 * - **Crash safety**: a torn or malformed line is skipped with a warning and reported by
 *   {@link FileTapeStore.skippedLines}; it never blocks later appends, and nothing already
 *   written is rewritten or truncated.
 * - **Reads** are incremental and indexed: reading after the last anchor costs the bytes
 *   after that anchor, however long the tape.
 *
 * ```ts
 * const store = createFileTapeStore({ directory: join(home, "tapes") });
 * await store.appendBatch(tape, [entries.message(user), entries.message(reply)]);
 * ```
 */
export function createFileTapeStore(options: FileTapeStoreOptions): FileTapeStore {
  const { directory } = options;
  const maxOpenFiles = Math.max(1, options.maxOpenFiles ?? 1024);
  const maxKnownFiles = maxOpenFiles * 4;
  const lock = createProcessLock(join(directory, TAPE_LOCK_FILE), { timeoutMs: options.lockTimeoutMs, lingerMs: options.lockLingerMs ?? LOCK_LINGER_MS });
  /** Every file known, least recently used first. */
  const files = new Map<string, TapeFile>();
  /** The files whose handle was open after their last call, least recently used first. */
  const openFiles = new Map<string, TapeFile>();
  /** Created (or found) once, before the first file is. */
  let directoryReady: Promise<unknown> | null = null;
  const names = createFileNameIndex(directory);

  function fileFor(tape: string): TapeFile {
    checkTapeName(tape);
    let file = files.get(tape);
    if (file) files.delete(tape);
    else file = new TapeFile(join(directory, `${tape}.jsonl`));
    files.set(tape, file);
    return file;
  }

  /**
   * Notes a call on `tape`'s file and keeps the bounds: the least recently used idle handles past
   * `maxOpenFiles` are closed, and what is known of the least recently used closed files past
   * four times that is forgotten (a gateway meets new chats for ever; such a file is indexed
   * again, from its end, when it is next read). Both walks start from the least recently used
   * end and stop at the bound, so a call costs the same however many files are known.
   */
  function keepBounds(tape: string, file: TapeFile): void {
    openFiles.delete(tape);
    if (file.open) openFiles.set(tape, file);
    for (const [name, open] of openFiles) {
      if (openFiles.size <= maxOpenFiles) break;
      if (open.busy && open.open) continue;
      openFiles.delete(name);
      if (open.open) void open.release();
    }
    for (const [name, known] of files) {
      if (files.size <= maxKnownFiles) break;
      if (!known.open && !known.busy) files.delete(name);
    }
  }

  // Files created together share directory syncs: a caller joins the next sync that starts
  // after its file was created (the running one may have started before it).
  let directorySync: Promise<void> | null = null;
  let nextDirectorySync: Promise<void> | null = null;
  function sharedDirectorySync(): Promise<void> {
    if (!directorySync) {
      directorySync = syncDirectory(directory).finally(() => (directorySync = null));
      return directorySync;
    }
    return (nextDirectorySync ??= directorySync
      .catch(() => undefined)
      .then(() => {
        nextDirectorySync = null;
        return sharedDirectorySync();
      }));
  }

  async function syncDirectoryOf(path: string): Promise<void> {
    try {
      await sharedDirectorySync();
    } catch (error) {
      throw fileStoreError(error, "sync the directory of", path);
    }
  }

  /** Directory syncs in flight for files just created. */
  const directorySyncs = new Map<TapeFile, Promise<void>>();
  // Appends waiting for the next write round, and the rounds running (one at a time).
  let waiting: WaitingAppend[] = [];
  let rounds: Promise<void> | null = null;

  /** Runs write rounds until no append waits. */
  async function runRounds(): Promise<void> {
    while (waiting.length > 0) {
      const round = waiting;
      waiting = [];
      await writeRound(round);
    }
    rounds = null;
  }

  /**
   * One round: under one take of the directory lock, each file's waiting entries are written
   * with one `write`, the files side by side; each caller gets its own entries back.
   */
  async function writeRound(round: readonly WaitingAppend[]): Promise<void> {
    const byFile = new Map<TapeFile, WaitingAppend[]>();
    for (const append of round) {
      const list = byFile.get(append.file);
      if (list) list.push(append);
      else byFile.set(append.file, [append]);
    }
    const writeFile = async (file: TapeFile, appends: readonly WaitingAppend[]): Promise<void> => {
      try {
        const { stored, durable } = await file.appendLocked(appends.flatMap((append) => append.entries));
        let offset = 0;
        for (const append of appends) append.resolve({ stored: stored.slice(offset, (offset += append.entries.length)), durable });
      } catch (error) {
        for (const append of appends) append.reject(error);
      }
    };
    try {
      await lock.run(() => Promise.all([...byFile].map(([file, appends]) => writeFile(file, appends))));
    } catch (error) {
      // The lock could not be taken: nothing was written (settled appends ignore this).
      for (const append of round) append.reject(error);
    }
  }

  /** Runs `work` on `tape`'s file, marked busy, then keeps the bounds. */
  async function useFile<T>(tape: string, work: (file: TapeFile) => Promise<T>): Promise<T> {
    const file = fileFor(tape);
    try {
      return await file.use(() => work(file));
    } finally {
      keepBounds(tape, file);
    }
  }

  function writeInRound(file: TapeFile, entries: readonly EncodedEntry[]): Promise<LockedAppend> {
    return new Promise((resolve, reject) => {
      waiting.push({ file, entries, resolve, reject });
      rounds ??= runRounds();
    });
  }

  async function appendBatch(tape: string, batch: readonly NewTapeEntry[]): Promise<TapeEntry[]> {
    return appendEncoded(tape, batch.map(encodeNewEntry));
  }

  async function appendEncoded(tape: string, prepared: readonly EncodedEntry[]): Promise<TapeEntry[]> {
    const file = fileFor(tape);
    if (prepared.length === 0) return [];
    try {
      return await file.use(async () => {
        await (directoryReady ??= makeDirectoryAsync(directory).catch((error: unknown) => {
          directoryReady = null;
          throw fileStoreError(error, "create the directory of", file.path);
        }));
        await file.openForAppend();
        const { stored, durable } = await writeInRound(file, prepared);
        await durable();
        // Appends that shared the round which created the file wait for its directory entry too.
        if (file.takeCreated()) {
          const synced = syncDirectoryOf(file.path).finally(() => directorySyncs.delete(file));
          directorySyncs.set(file, synced);
        }
        await directorySyncs.get(file);
        return stored;
      });
    } finally {
      keepBounds(tape, file);
    }
  }

  return {
    directory,
    async listTapes() {
      let names: string[];
      try {
        names = await readdir(directory);
      } catch (error) {
        if (errorCode(error) === "ENOENT") return [];
        throw fileStoreError(error, "list", directory);
      }
      return names
        .filter((name) => name.endsWith(".jsonl"))
        .map((name) => name.slice(0, -".jsonl".length))
        .filter(isListedStem)
        .sort();
    },
    fetchAll: (query: TapeQuery) => useFile(query.tape, (file) => file.read(query)),
    endsAt: (end) => useFile(end.tape, (file) => file.endsAt(end)),
    async append(tape, entry) {
      return onlyEntry(await appendBatch(tape, [entry]));
    },
    appendBatch,
    appendEncoded,
    async reset(tape) {
      const file = fileFor(tape);
      await lock.run(() => file.resetLocked());
      try {
        await syncDirectory(directory);
      } catch (error) {
        if (errorCode(error) !== "ENOENT") throw fileStoreError(error, "sync the directory of", file.path);
      }
    },
    async skippedLines(tape) {
      const file = fileFor(tape);
      return file.use(() => file.skippedLines());
    },
    recordTapeName: (record) => names.record(record),
    tapeNames: () => names.read(),
    async tapeStats() {
      return scanTapeFiles(directory, await this.listTapes());
    },
    close,
    [Symbol.asyncDispose]: close,
  };

  async function close(): Promise<void> {
    while (rounds) await rounds;
    await names.flush();
    await Promise.all([...files.values()].map((file) => file.release()));
    files.clear();
    openFiles.clear();
    lock.close();
  }
}
