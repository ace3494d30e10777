/**
 * The inbound journal: an append-only JSONL file where a channel records what it received
 * before it acknowledges it to its source, so a restart (SIGTERM or kill -9) loses nothing.
 *
 * One record per line, per item id (Telegram's `update_id`):
 * - `{"t":"received","id":N,"at":S,"item":{...}}` the item as received (enough to run it
 *   again), at Unix time S (seconds);
 * - `{"t":"started","id":N}` its turn began;
 * - `{"t":"retried","id":N}` it was run again after a restart cut its turn off;
 * - `{"t":"done","id":N}` its turn ended and its reply was sent;
 * - `{"t":"mark","last":N,"seen":[[S,id,...],...]}` written by compaction: N is the highest
 *   id ever recorded (where polling resumes), `seen` the ids recorded lately and when
 *   (./seen-ids.ts). Ids are deduplicated by that exact set, never by N: an id below N that
 *   is not in it was never seen and is taken (Telegram's webhook delivers out of order).
 *
 * Every append is written and fdatasync'ed before its promise resolves, except `started`,
 * which rides on the next sync (a crash that loses it makes the turn look not yet begun, so
 * it runs again as a first attempt), and a `done` the caller asks not to wait for: it is
 * written at once (a `kill -9` cannot undo a write) and rides on the next sync, which
 * {@link InboundJournal.synced} makes happen within {@link SYNC_SOON_MS} when no record asks
 * for one sooner. Appends are group-committed: the records that arrive
 * while a write or sync is under way are written together by the next one, as one buffer
 * (each record is encoded once, when it is appended) in one write on the open file, then
 * one fdatasync for all of them. Once at least 256 lines were appended since the last
 * compaction, and at least as many bytes as it wrote (its `mark` line only, when no item is
 * open), the file is compacted to its `mark` line and the open items: a new file, written
 * and fdatasync'ed, renamed over the old one, then the folder fsync'ed so the rename itself
 * survives a power loss. It stays within about twice the size of what it must remember, and
 * compaction costs a bounded share of the writes. Only asynchronous calls are used
 * (./journal-files.ts): nothing blocks the event loop. A torn last line (a crash mid-write)
 * is ignored when the journal is opened, and the file is rewritten without it.
 */
import { dirname } from "node:path";
import { isRecord } from "../kernel/guards.ts";
import { readBoundedTextFile } from "../config/bounded-file.ts";
import { makeDirectoryAsync } from "../config/home-dir.ts";
import { errorCode } from "../config/thrown.ts";
import { createLogger } from "../kernel/log.ts";
import { nodeJournalFiles, writeAll, type JournalFile, type JournalFiles } from "./journal-files.ts";
import { SeenIds, type SeenIdsOptions } from "./seen-ids.ts";

const log = createLogger("bub:channels");

/** The fewest lines written since the last compaction before the journal is compacted (it is also compacted when opened). */
const COMPACT_AFTER_LINES = 256;
/** How long a line written without a sync waits at most for one, once a caller waits for it ({@link InboundJournal.synced}). */
export const SYNC_SOON_MS = 10;
/** The most bytes of a journal read at start: far more than 256 lines of updates ever take; a larger file (or a FIFO) is refused. */
const JOURNAL_MAX_BYTES = 64 * 1024 * 1024;

/** One item of the journal that is not done. */
export interface JournalEntry {
  id: number;
  item: unknown;
  /** Its turn began (before the last restart, when read at open). */
  started: boolean;
  /** How many times its turn began (a restart cut each of them off). */
  starts: number;
  /** It was already run once more after a restart cut its turn off. */
  retried: boolean;
}

type JournalRecord =
  | { t: "received"; id: number; item: unknown; at?: number }
  | { t: "started" | "retried" | "done"; id: number }
  | { t: "mark"; last: number; seen?: unknown };

interface PendingWrite {
  lines: string[];
  /** Resolve only once the lines are fdatasync'ed (else once written). */
  sync: boolean;
  resolve: () => void;
  reject: (error: unknown) => void;
}

function parseRecord(line: string): JournalRecord | null {
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch {
    return null;
  }
  if (!isRecord(record)) return null;
  const { t, id, last, at } = record;
  if (t === "mark" && typeof last === "number") return { t, last, seen: record.seen };
  if (typeof id !== "number") return null;
  if (t === "received") return typeof at === "number" ? { t, id, item: record.item, at } : { t, id, item: record.item };
  if (t === "started" || t === "retried" || t === "done") return { t, id };
  return null;
}

/** See the module comment. Open one with {@link InboundJournal.open}. */
export class InboundJournal {
  readonly path: string;
  readonly #open = new Map<number, JournalEntry>();
  /** Every id recorded lately, open or done (see ./seen-ids.ts). */
  readonly #seen: SeenIds;
  #last = 0;
  #handle: JournalFile | null = null;
  readonly #files: JournalFiles;
  /** The `received` line of each open item, as written (reused by compaction rather than encoded again). */
  readonly #receivedLines = new Map<number, string>();
  #queue: PendingWrite[] = [];
  #writing: Promise<void> | null = null;
  #linesSinceCompaction = 0;
  #bytesSinceCompaction = 0;
  /** The size of the file the last compaction wrote, and of its mark line. */
  #compactedBytes = 0;
  #markBytes = 0;
  #closed = false;
  /** Lines were written since the last fdatasync. */
  #unsynced = false;
  /** Who waits, through {@link synced}, for the next fdatasync; and the timer that makes one. */
  #syncWaiters: PromiseWithResolvers<void>[] = [];
  #syncTimer: NodeJS.Timeout | null = null;
  readonly #compactAfterLines: number;

  private constructor(path: string, compactAfterLines: number, seen: SeenIdsOptions, files: JournalFiles) {
    this.path = path;
    this.#compactAfterLines = compactAfterLines;
    this.#files = files;
    this.#seen = new SeenIds(seen);
  }

  /**
   * Reads the journal at `path` (creating its folder), drops torn lines, and opens it for
   * appending. `compactAfterLines`: the fewest lines written before the journal is compacted
   * (default 256); `seen`: how long and how many ids are remembered (./seen-ids.ts); `files`:
   * the file operations after the first read (tests count them; default `node:fs/promises`).
   */
  static async open(path: string, options: { compactAfterLines?: number; seen?: SeenIdsOptions; files?: JournalFiles } = {}): Promise<InboundJournal> {
    const compactAfterLines = Math.max(1, options.compactAfterLines ?? COMPACT_AFTER_LINES);
    const journal = new InboundJournal(path, compactAfterLines, options.seen ?? {}, options.files ?? nodeJournalFiles);
    await makeDirectoryAsync(dirname(path));
    let text = "";
    try {
      text = await readBoundedTextFile(path, { maxBytes: JOURNAL_MAX_BYTES, what: "the inbound journal", tooLargeFix: "move it away (its pending messages are then not answered)" });
    } catch (error) {
      if (errorCode(error) !== "ENOENT") throw error;
    }
    const lines = text.split("\n");
    let ignored = 0;
    for (const line of lines) {
      if (line.trim() === "") continue;
      const record = parseRecord(line);
      // A `received` line without its time is written again with one (by the compaction below).
      if (record) journal.#apply(record, record.t === "received" && record.at !== undefined ? line : undefined);
      else ignored++;
    }
    if (ignored > 0) log.warn(`inbound.journal ignored ${ignored} unreadable line(s) in ${path} (a write cut off by a crash)`);
    await journal.#compact();
    return journal;
  }

  /** Applies a record; `line` is a `received` record's line as written, kept while its item is open. */
  #apply(record: JournalRecord, line?: string): void {
    if (record.t === "mark") {
      // A mark written before ids were remembered (no `seen`) only says where polling resumes.
      this.#last = Math.max(this.#last, record.last);
      this.#seen.addRuns(record.seen);
      return;
    }
    const { id } = record;
    if (record.t === "received") {
      this.#last = Math.max(this.#last, id);
      if (!this.#seen.has(id) && !this.#open.has(id)) {
        this.#open.set(id, { id, item: record.item, started: false, starts: 0, retried: false });
        if (line !== undefined) this.#receivedLines.set(id, line);
      }
      this.#seen.add(id, record.at);
      return;
    }
    const entry = this.#open.get(id);
    if (record.t === "done") {
      this.#open.delete(id);
      this.#receivedLines.delete(id);
    } else if (entry && record.t === "started") {
      entry.started = true;
      entry.starts++;
    }
    else if (entry && record.t === "retried") entry.retried = true;
  }

  /** The highest id ever recorded (0 when none): acknowledge up to here. */
  get lastId(): number {
    return this.#last;
  }

  /**
   * True when the id was recorded lately (received, open or done; see ./seen-ids.ts for
   * how long): an id below {@link lastId} that was never recorded is not.
   */
  has(id: number): boolean {
    return this.#open.has(id) || this.#seen.has(id);
  }

  /** The items received and not done, in id order. */
  pending(): JournalEntry[] {
    return [...this.#open.values()].sort((a, b) => a.id - b.id);
  }

  /** Whether an item is received and not done. */
  isOpen(id: number): boolean {
    return this.#open.has(id);
  }

  /**
   * Durably records the items not recorded before; resolves with the ids it recorded (in
   * the order given), once they are on disk.
   */
  async receive(items: readonly { id: number; item: unknown }[]): Promise<number[]> {
    const fresh: number[] = [];
    const lines: string[] = [];
    for (const { id, item } of items) {
      if (this.has(id)) continue;
      const at = this.#seen.now();
      const line = JSON.stringify({ t: "received", id, at, item });
      this.#apply({ t: "received", id, item, at }, line);
      fresh.push(id);
      lines.push(line);
    }
    if (lines.length > 0) await this.#append(lines);
    return fresh;
  }

  /** Records that these items' turn began (written, not waited for on disk: see the module comment). */
  started(ids: readonly number[]): Promise<void> {
    return this.#record("started", ids, false);
  }

  /** Records that these items are being run again after a restart. */
  retried(ids: readonly number[]): Promise<void> {
    return this.#record("retried", ids);
  }

  /**
   * Records that these items are finished (replied to); compacts when nothing is open.
   * `sync` false: resolves once the line is written; it reaches the disk with the next sync
   * (see {@link synced}).
   */
  done(ids: readonly number[], sync = true): Promise<void> {
    return this.#record("done", ids, sync);
  }

  /**
   * Resolves once every line written so far is on disk: after the next fdatasync that starts
   * from now, which a record asking for one brings, or else one made {@link SYNC_SOON_MS}
   * later. Rejects when that fdatasync fails.
   */
  synced(): Promise<void> {
    if (!this.#unsynced) return Promise.resolve();
    if (this.#closed) return Promise.reject(new Error(`inbound journal ${this.path} is closed`));
    const waiter = Promise.withResolvers<void>();
    this.#syncWaiters.push(waiter);
    this.#syncTimer ??= setTimeout(() => {
      this.#syncTimer = null;
      if (this.#syncWaiters.length > 0) this.#append([], true).catch(() => undefined);
    }, SYNC_SOON_MS);
    return waiter.promise;
  }

  /** The waiters a sync starting now answers (and no timer for them any more). */
  #takeSyncWaiters(): PromiseWithResolvers<void>[] {
    const waiters = this.#syncWaiters;
    this.#syncWaiters = [];
    if (this.#syncTimer) clearTimeout(this.#syncTimer);
    this.#syncTimer = null;
    return waiters;
  }

  #record(kind: "started" | "retried" | "done", ids: readonly number[], sync = true): Promise<void> {
    const lines: string[] = [];
    for (const id of ids) {
      if (!this.#open.has(id)) continue;
      this.#apply({ t: kind, id });
      lines.push(JSON.stringify({ t: kind, id }));
    }
    return lines.length > 0 ? this.#append(lines, sync) : Promise.resolve();
  }

  #append(lines: string[], sync = true): Promise<void> {
    if (this.#closed) return Promise.reject(new Error(`inbound journal ${this.path} is closed`));
    const written = Promise.withResolvers<void>();
    this.#queue.push({ lines, sync, resolve: written.resolve, reject: written.reject });
    this.#writing ??= this.#drain();
    return written.promise;
  }

  /** Writes what is queued, one write (and one fdatasync when a record needs it) per batch, until nothing is queued. */
  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue;
        this.#queue = [];
        const sync = batch.some((write) => write.sync);
        const waiters = sync ? this.#takeSyncWaiters() : [];
        try {
          const lines = batch.flatMap((write) => write.lines);
          const handle = this.#handle;
          if (!handle) throw new Error(`inbound journal ${this.path} is not open`);
          if (lines.length > 0) {
            const bytes = Buffer.from(`${lines.join("\n")}\n`);
            await writeAll(handle, bytes);
            this.#unsynced = true;
            this.#linesSinceCompaction += lines.length;
            this.#bytesSinceCompaction += bytes.length;
          }
          if (sync) {
            await handle.datasync();
            this.#unsynced = false;
          }
          for (const write of batch) write.resolve();
          for (const waiter of waiters) waiter.resolve();
        } catch (error) {
          for (const write of [...batch, ...waiters]) write.reject(error);
        }
        if (this.#queue.length === 0 && this.#dueForCompaction()) {
          try {
            await this.#compact();
          } catch (error) {
            log.warn(`inbound.journal compaction of ${this.path} failed`, error);
          }
        }
      }
    } finally {
      this.#writing = null;
    }
  }

  /** Whether enough was appended since the last compaction (see the module comment). */
  #dueForCompaction(): boolean {
    if (this.#linesSinceCompaction < this.#compactAfterLines) return false;
    return this.#bytesSinceCompaction >= (this.#open.size === 0 ? this.#markBytes : this.#compactedBytes);
  }

  /**
   * Rewrites the journal as its mark (with the ids still remembered) and the open items (new
   * file, fdatasync, rename, fsync of the folder), and reopens it for appending.
   */
  async #compact(): Promise<void> {
    this.#seen.prune();
    // An open item's id is remembered through its own `received` line, not the mark's.
    const seen = this.#seen.toRuns((id) => !this.#open.has(id));
    const lines = [JSON.stringify({ t: "mark", last: this.#last, seen })];
    for (const entry of this.pending()) {
      lines.push(this.#receivedLines.get(entry.id) ?? JSON.stringify({ t: "received", id: entry.id, at: this.#seen.atOf(entry.id), item: entry.item }));
      for (let run = 0; run < entry.starts; run++) lines.push(JSON.stringify({ t: "started", id: entry.id }));
      if (entry.retried) lines.push(JSON.stringify({ t: "retried", id: entry.id }));
    }
    const temporary = `${this.path}.tmp`;
    const bytes = Buffer.from(`${lines.join("\n")}\n`);
    const next = await this.#files.open(temporary, "w", 0o600);
    try {
      await writeAll(next, bytes);
      await next.datasync();
    } finally {
      await next.close();
    }
    await this.#files.rename(temporary, this.path);
    // Until the folder is synced, a power loss may bring the old file back, and with it lose
    // what is appended to the new one from now on.
    await this.#files.syncDirectory(dirname(this.path));
    await this.#handle?.close();
    this.#handle = await this.#files.open(this.path, "a", 0o600);
    this.#unsynced = false;
    this.#linesSinceCompaction = 0;
    this.#bytesSinceCompaction = 0;
    this.#compactedBytes = bytes.length;
    this.#markBytes = Buffer.byteLength(lines[0] ?? "") + 1;
  }

  /** Resolves once everything appended so far is written (and on disk, where its record asked for it). */
  async flush(): Promise<void> {
    while (this.#writing) await this.#writing;
  }

  /** Flushes, syncs what was written without a sync, and closes the file; later appends reject. */
  async close(): Promise<void> {
    await this.flush();
    if (this.#unsynced || this.#syncWaiters.length > 0) await this.#append([], true).catch((error: unknown) => log.warn(`inbound.journal ${this.path} could not be synced before closing`, error));
    this.#closed = true;
    await this.#handle?.close();
    this.#handle = null;
  }
}
