/**
 * One turn's read of its session tape. Before and while it runs, a turn asks its tape several
 * things: the session switches (the builtin `loadState`), whether it has an anchor (the
 * bootstrap anchor), the context after the last anchor (each model step), the last system
 * prompt. Asked of the store, each was a call: a `stat` and a read of the file in the file
 * store, a statement in PostgreSQL. A snapshot reads the tape once, and answers from what it
 * read every query that read answers exactly. The tapes remember between turns what the last
 * snapshot of each held, so a turn reads only the entries after the last one held (with a
 * file, the lines after it: not the whole conversation again); past the memory bound, a tape
 * is remembered by its last anchor and read from there; unknown, it is read whole. A reset,
 * by this process or another, is noticed because the entry is no longer there with its date.
 * A turn told where its tape ends (a message of the shared queue, see `TapeEnd`) reads nothing
 * when the last turn of the tape in this process held it up to there; nor does one whose store
 * knows the tape still ends with the entry held (`TapeStore.endsAt`: the file store's index,
 * after its `stat` of the file).
 * The entries it answers are frozen and shared by every query (a tape entry is an immutable
 * fact), not copied for each: a turn asks for its context at every model step.
 * Other queries go to the store, and so does a query for an anchor it does not hold unless it
 * read the whole tape. Writes go to the store and are added to what was read. What must not be
 * decided on the turn's read (has another turn started the session meanwhile?) asks the store
 * below the snapshot ({@link storeBelow}).
 */
import { BubError } from "../kernel/errors.ts";
import type { NewTapeEntry, TapeEnd, TapeEntry, TapeQuery, TapeStore } from "../kernel/tape-contract.ts";
import { appendMany, takesEncoded, type EncodedAppendStore } from "./append-many.ts";
import { cloneEntry, freezeEntry } from "./entry.ts";
import { anchorSliceOf, runQuery } from "./query-engine.ts";

/** Tapes remembered between turns; the least recently used are forgotten past this. */
const MAX_REMEMBERED_TAPES = 4096;
/** How much of the entries' text is remembered between turns over all tapes, in characters (see {@link sizeOf}); one tape, a quarter. */
const MAX_REMEMBERED_TEXT = 32 * 1024 * 1024;

/** About how much memory `value` holds: its strings' lengths, plus a little per other value. */
function textSize(value: unknown, depth: number): number {
  if (typeof value === "string") return value.length;
  if (value === null || typeof value !== "object" || depth > 6) return 8;
  let size = 16;
  for (const item of Array.isArray(value) ? value : Object.values(value)) size += textSize(item, depth + 1);
  return size;
}

/** About how much memory `entries` hold (what they count against {@link MAX_REMEMBERED_TEXT}); each entry is measured when added to what a snapshot holds. */
function sizeOf(entries: readonly TapeEntry[]): number {
  let total = 0;
  for (const entry of entries) total += 64 + textSize(entry.payload, 0) + textSize(entry.meta, 0);
  return total;
}

/** Where a tape's last anchor was when it was last read: the entry's id and date. */
interface AnchorMark {
  readonly id: number;
  readonly date: string;
}

/**
 * What a snapshot holds: the tape's entries from `entries[0]` to its end when read, or the whole
 * tape (`complete`), with its last anchor and size kept up to date as entries are added (so a
 * turn never walks the whole conversation to find them).
 */
interface Held {
  readonly entries: TapeEntry[];
  readonly complete: boolean;
  /** The last anchor among `entries`, and its index there (-1: none). */
  mark: AnchorMark | null;
  markIndex: number;
  /** About how much memory `entries` hold (see {@link sizeOf}). */
  size: number;
}

/** A {@link Held} of `entries` (frozen here: they are shared, never copied, see {@link freezeEntry}). */
function heldOf(entries: TapeEntry[], complete: boolean): Held {
  for (const entry of entries) freezeEntry(entry);
  const held: Held = { entries, complete, mark: null, markIndex: -1, size: sizeOf(entries) };
  noteAnchor(held, 0);
  return held;
}

/** Updates `held`'s last anchor from its entries at `from` on. */
function noteAnchor(held: Held, from: number): void {
  for (let index = held.entries.length - 1; index >= from; index--) {
    const entry = held.entries[index];
    if (entry.kind !== "anchor") continue;
    held.mark = { id: entry.id, date: entry.date };
    held.markIndex = index;
    return;
  }
}

/** Adds `added` (frozen here) to the end of `held`. */
function addTo(held: Held, added: readonly TapeEntry[]): void {
  for (const entry of added) freezeEntry(entry);
  const from = held.entries.length;
  held.entries.push(...added);
  held.size += sizeOf(added);
  noteAnchor(held, from);
}

/** What is remembered of one tape: its last anchor and, while the bound allows, what the last snapshot of it held. */
interface Remembered {
  readonly mark: AnchorMark | null;
  held: Held | null;
  /** How much `held` held when remembered (what it counts against the bound, see {@link sizeOf}). */
  counted: number;
}

/**
 * What the snapshots of one store remember of each tape between turns (bounded, least
 * recently used first out): the last anchor and what the last snapshot of each tape held, so
 * the next turn of the tape reads only what came after it (one line of a file), or nothing at
 * all when it is told where the tape ends (see {@link TapeEnd}).
 */
export class TapeTails {
  readonly #tapes = new Map<string, Remembered>();
  readonly #maxSize: number;
  #size = 0;

  /**
   * @param maxText how much of the entries' text to remember over all tapes (see {@link sizeOf});
   * one tape holding more than a quarter of it is remembered by its last anchor only, and so is
   * every tape with 0.
   */
  constructor(maxText = MAX_REMEMBERED_TEXT) {
    this.#maxSize = maxText;
  }

  /** What is remembered of `tape`, now the most recently used. */
  get(tape: string): Readonly<Remembered> | undefined {
    const remembered = this.#tapes.get(tape);
    if (remembered) {
      this.#tapes.delete(tape);
      this.#tapes.set(tape, remembered);
    }
    return remembered;
  }

  /** Remembers what a snapshot of `tape` holds, now or after it grew (null: nothing, after a reset or a failed check). */
  set(tape: string, held: Held | null): void {
    this.#forget(tape);
    if (held === null) return;
    const { size } = held;
    const counted = size > 0 && size <= this.#maxSize / 4 ? size : 0;
    this.#tapes.set(tape, { mark: held.mark, held: counted > 0 ? held : null, counted });
    this.#size += counted;
    for (const [name, remembered] of this.#tapes) {
      if (this.#tapes.size <= MAX_REMEMBERED_TAPES && this.#size <= this.#maxSize) break;
      if (name === tape) continue;
      if (this.#tapes.size > MAX_REMEMBERED_TAPES) this.#forget(name);
      else {
        this.#size -= remembered.counted;
        remembered.held = null;
        remembered.counted = 0;
      }
    }
  }

  #forget(tape: string): void {
    this.#size -= this.#tapes.get(tape)?.counted ?? 0;
    this.#tapes.delete(tape);
  }
}

/** A turn's snapshot of one tape; see the module comment. */
export interface TapeSnapshot {
  /** The parent store, with reads of the tape answered from the snapshot where they can be. */
  readonly store: TapeStore;
  /**
   * Adds what was appended to the tape since it was read (one call of the store, for the
   * entries after the last one held); a reset meanwhile makes the next query read it again.
   */
  refresh(): Promise<void>;
}

/** The store each snapshot store reads and writes through. */
const below = new WeakMap<TapeStore, TapeStore>();

/** The store under a snapshot's store (`store` itself when it is not one): for reads that must be fresh. */
export function storeBelow(store: TapeStore): TapeStore {
  return below.get(store) ?? store;
}

/**
 * The answer to `query` from `held`, or null when the store must answer: a text or date
 * search (a store may match text its own way), a read reaching before what is held, or an
 * anchor not held when only the tape's end was read.
 * @throws BubError `not_found` for an anchor the whole tape, as read, does not have.
 */
function answerFrom(held: Held, query: TapeQuery): TapeEntry[] | null {
  if (query.text !== undefined || query.betweenDates !== undefined) return null;
  const first = held.entries[0]?.id ?? 1;
  if (!held.complete && anchorSliceOf(query).mode === "all" && !(query.afterId !== undefined && query.afterId >= first - 1)) return null;
  try {
    return runQuery(held.entries, query);
  } catch (error) {
    if (BubError.isInstance(error) && error.kind === "not_found" && !held.complete) return null;
    throw error;
  }
}

/**
 * A copy of `held` from its last anchor on (what a turn needs of what the last one held); the
 * entries are shared, only the list is new, so two turns of one tape never add to one list.
 */
function fromLastAnchor(held: Held): Held {
  if (held.markIndex <= 0) return { ...held, entries: [...held.entries] };
  const entries = held.entries.slice(held.markIndex);
  return { entries, complete: false, mark: held.mark, markIndex: 0, size: sizeOf(entries) };
}

/**
 * A snapshot of `tape` over `parent`; `tails` remembers what it held for the next snapshot of
 * the tape. Nothing is read until the first query of the tape. When `end` says where the
 * tape ends and the tape's previous snapshot held it up to that entry (or `end` says it is
 * empty), nothing is read at all. Else one call of `parent` reads, in the first way that applies:
 * - from the last entry the tape's previous snapshot held on, when that entry is still there
 *   with its date (a tape only grows until reset, and a reset restarts its ids with new dates):
 *   the entries since are added to what was held;
 * - from its last anchor on, when only the anchor is remembered and still there with its date;
 * - the whole tape.
 *
 * ```ts
 * const snapshot = createTapeSnapshot(store, tape.name, tails);
 * const turnTape = tape.withStore(snapshot.store); // its reads: one call of `store`
 * ```
 */
export function createTapeSnapshot(parent: TapeStore, tape: string, tails: TapeTails, end?: TapeEnd): TapeSnapshot {
  /** Where the tape ended when the turn's message was admitted: good for the first read only. */
  let known = end?.tape === tape ? end : undefined;
  let held: Held | null = null;
  let loading: Promise<Held | null> | null = null;
  /** Bumped by every write and reset of the tape: a read started before one is not kept. */
  let version = 0;

  const keep = (next: Held | null, readAt: number): Held | null => {
    if (readAt !== version) return null;
    held = next;
    tails.set(tape, next);
    return next;
  };

  /** Whether the store knows, without reading, that the tape still ends with `last` (see {@link TapeStore.endsAt}). */
  async function endsWith(last: TapeEntry): Promise<boolean> {
    return (await parent.endsAt?.({ tape, id: last.id, date: last.date })) ?? false;
  }

  /** Adds to `before` what was read from its last entry on; false when that entry is gone (a reset). */
  function extend(before: Held, found: readonly TapeEntry[]): boolean {
    const last = before.entries.at(-1);
    const first = found[0];
    if (last === undefined || first === undefined || first.id !== last.id || first.date !== last.date) return false;
    addTo(before, found.slice(1));
    return true;
  }

  async function load(): Promise<Held | null> {
    const readAt = version;
    // Good only while nothing was written through the snapshot (else the end moved since).
    const ended = version === 0 ? known : undefined;
    known = undefined;
    if (ended?.id === 0) return keep(heldOf([], true), readAt);
    const remembered = tails.get(tape);
    const before = remembered?.held ? fromLastAnchor(remembered.held) : null;
    const last = before?.entries.at(-1);
    if (before && last) {
      if (ended && last.id === ended.id && last.date === ended.date) return keep(before, readAt);
      if (await endsWith(last)) return keep(before, readAt);
      if (extend(before, await parent.fetchAll({ tape, afterId: last.id - 1 }))) return keep(before, readAt);
    } else if (remembered?.mark) {
      const { mark } = remembered;
      const found = await parent.fetchAll({ tape, afterId: mark.id - 1 });
      const first = found[0];
      if (first !== undefined && first.id === mark.id && first.kind === "anchor" && first.date === mark.date) return keep(heldOf(found, false), readAt);
    }
    return keep(heldOf(await parent.fetchAll({ tape }), true), readAt);
  }

  async function read(query: TapeQuery): Promise<TapeEntry[]> {
    if (!held) {
      loading ??= load().finally(() => (loading = null));
      await loading;
    }
    const answer = held ? answerFrom(held, query) : null;
    return answer ?? parent.fetchAll(query);
  }

  /**
   * Adds entries the store just stored for the tape, when they follow what is held: copies,
   * unless the store answered entries no caller may change (an encoded append's).
   */
  function wrote(stored: readonly TapeEntry[], copy = true): void {
    version++;
    if (!held || stored.length === 0) return;
    const last = held.entries.at(-1)?.id ?? 0;
    if (stored[0].id !== last + 1) {
      held = null; // another writer came between: read again when asked
      return;
    }
    addTo(held, copy ? stored.map(cloneEntry) : stored);
    tails.set(tape, held);
  }

  const store: TapeStore & Partial<Pick<EncodedAppendStore, "appendEncoded">> = {
    listTapes: () => parent.listTapes(),
    fetchAll: (query) => (query.tape === tape ? read(query) : parent.fetchAll(query)),
    async append(name, entry) {
      const stored = await parent.append(name, entry);
      if (name === tape) wrote([stored]);
      return stored;
    },
    async appendBatch(name, batch: readonly NewTapeEntry[]) {
      const stored = await appendMany(parent, name, batch);
      if (name === tape) wrote(stored);
      return stored;
    },
    async reset(name) {
      if (name === tape) version++;
      await parent.reset(name);
      if (name !== tape) return;
      version++;
      held = heldOf([], true);
      tails.set(tape, null);
    },
  };
  if (takesEncoded(parent)) {
    store.appendEncoded = async (name, encoded) => {
      const stored = await parent.appendEncoded(name, encoded);
      if (name === tape) wrote(stored, false);
      return stored;
    };
  }
  below.set(store, parent);
  if (parent.recordTapeName) store.recordTapeName = (record) => parent.recordTapeName?.(record) ?? Promise.resolve();
  if (parent.tapeNames) store.tapeNames = () => parent.tapeNames?.() ?? Promise.resolve([]);
  if (parent.tapeStats) store.tapeStats = () => parent.tapeStats?.() ?? Promise.resolve([]);

  return {
    store,
    async refresh() {
      const last = held?.entries.at(-1);
      if (!held || !last) {
        held = null;
        return;
      }
      if (await endsWith(last)) return;
      const readAt = version;
      const found = await parent.fetchAll({ tape, afterId: last.id - 1 });
      if (readAt !== version || held === null) return;
      if (extend(held, found)) tails.set(tape, held);
      else {
        held = null;
        tails.set(tape, null);
      }
    },
  };
}
