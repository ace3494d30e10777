/**
 * One turn's read of its session tape. Before and while it runs, a turn asks its tape several
 * things: the session switches (the builtin `loadState`), whether it has an anchor (the
 * bootstrap anchor), the context after the last anchor (each model step), the last system
 * prompt. Asked of the store, each was a call: a `stat` and a read of the file in the file
 * store, a statement in PostgreSQL. A snapshot reads the tape once, from its last anchor on
 * (the tapes remember that anchor's id and date between turns; a reset, by this process or
 * another, is noticed because the anchor is no longer there with its date) or whole when the
 * anchor is not known, and answers from what it read every query that read answers exactly.
 * Other queries go to the store, and so does a query for an anchor it does not hold unless it
 * read the whole tape. Writes go to the store and are added to what was read. What must not be
 * decided on the turn's read (has another turn started the session meanwhile?) asks the store
 * below the snapshot ({@link storeBelow}).
 */
import { BubError } from "../kernel/errors.ts";
import type { NewTapeEntry, TapeEntry, TapeQuery, TapeStore } from "../kernel/tape-contract.ts";
import { appendMany, takesEncoded, type EncodedAppendStore } from "./append-many.ts";
import { cloneEntry } from "./entry.ts";
import { anchorSliceOf, runQuery } from "./query-engine.ts";

/** Tapes whose last anchor is remembered; the least recently used are forgotten past this. */
const MAX_REMEMBERED_ANCHORS = 4096;

/** Where a tape's last anchor was when it was last read: the entry's id and date. */
interface AnchorMark {
  readonly id: number;
  readonly date: string;
}

/** The last anchor of each tape read through snapshots of one store (bounded, least recently used first out). */
export class TapeAnchors {
  readonly #marks = new Map<string, AnchorMark>();

  /** The mark of `tape`, now the most recently used. */
  get(tape: string): AnchorMark | undefined {
    const mark = this.#marks.get(tape);
    if (mark) {
      this.#marks.delete(tape);
      this.#marks.set(tape, mark);
    }
    return mark;
  }

  set(tape: string, mark: AnchorMark | null): void {
    this.#marks.delete(tape);
    if (mark === null) return;
    this.#marks.set(tape, mark);
    for (const name of this.#marks.keys()) {
      if (this.#marks.size <= MAX_REMEMBERED_ANCHORS) break;
      this.#marks.delete(name);
    }
  }
}

/** What a snapshot holds: the tape's entries from `entries[0]` to its end when read, or the whole tape (`complete`). */
interface Held {
  readonly entries: TapeEntry[];
  readonly complete: boolean;
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

function lastAnchorOf(entries: readonly TapeEntry[]): AnchorMark | null {
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index];
    if (entry.kind === "anchor") return { id: entry.id, date: entry.date };
  }
  return null;
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
    return runQuery(held.entries, query).map(cloneEntry);
  } catch (error) {
    if (BubError.isInstance(error) && error.kind === "not_found" && !held.complete) return null;
    throw error;
  }
}

/**
 * A snapshot of `tape` over `parent`; `anchors` remembers the tape's last anchor for the
 * next snapshot. Nothing is read until the first query of the tape.
 *
 * ```ts
 * const snapshot = createTapeSnapshot(store, tape.name, anchors);
 * const turnTape = tape.withStore(snapshot.store); // its reads: one call of `store`
 * ```
 */
export function createTapeSnapshot(parent: TapeStore, tape: string, anchors: TapeAnchors): TapeSnapshot {
  let held: Held | null = null;
  let loading: Promise<Held | null> | null = null;
  /** Bumped by every write and reset of the tape: a read started before one is not kept. */
  let version = 0;

  const keep = (next: Held | null, readAt: number): Held | null => {
    if (readAt !== version) return null;
    held = next;
    if (next) anchors.set(tape, lastAnchorOf(next.entries));
    return next;
  };

  async function load(): Promise<Held | null> {
    const readAt = version;
    const mark = anchors.get(tape);
    if (mark) {
      const found = await parent.fetchAll({ tape, afterId: mark.id - 1 });
      const first = found[0];
      if (first !== undefined && first.id === mark.id && first.kind === "anchor" && first.date === mark.date) return keep({ entries: found, complete: false }, readAt);
    }
    return keep({ entries: await parent.fetchAll({ tape }), complete: true }, readAt);
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
    held.entries.push(...(copy ? stored.map(cloneEntry) : stored));
    const mark = lastAnchorOf(stored);
    if (mark) anchors.set(tape, mark);
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
      held = { entries: [], complete: true };
      anchors.set(tape, null);
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
      const readAt = version;
      const found = await parent.fetchAll({ tape, afterId: last.id - 1 });
      if (readAt !== version || held === null) return;
      if (found[0]?.id === last.id && found[0].date === last.date) {
        held.entries.push(...found.slice(1));
        const mark = lastAnchorOf(found);
        if (mark) anchors.set(tape, mark);
      } else held = null;
    },
  };
}
