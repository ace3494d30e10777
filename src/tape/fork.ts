/**
 * Forks: a turn writes to private, in-memory copies of its session tape and the tape's
 * sidecars, reads the parent's entries followed by its own, and at the end either merges its
 * entries into the parent (fresh ids, dates kept, sidecars first) or discards them. Each
 * entry is prepared, redacted and encoded once, when the turn writes it (`encodeEntryBody`);
 * the merge hands those encodings to bub's own stores (`appendEncoded`).
 */
import { BubError, describeError } from "../kernel/errors.ts";
import { createLogger } from "../kernel/log.ts";
import type { NewTapeEntry, TapeEntry, TapeQuery, TapeStore } from "../kernel/tape-contract.ts";
import { appendMany, onlyEntry, takesEncoded } from "./append-many.ts";
import { cloneEntry, encodeEntryBody, entries, prepareEntry, type EncodedEntry, type PreparedEntry } from "./entry.ts";
import { anchorNotFound, anchorSliceOf, compileFilter, isAnchorNamed, runQuery } from "./query-engine.ts";
import { sidecarTapeName } from "./sidecar.ts";
import { hasAnchor, type Tape } from "./tape.ts";
import { withTapeLock } from "./tape-lock.ts";
import { storeBelow } from "./tape-snapshot.ts";
import { isRecord } from "../kernel/guards.ts";

const log = createLogger("bub:tape");

/** Where a fork is in its life. */
export type ForkState = "open" | "merging" | "merged" | "discarded";

/**
 * A turn's private copy of a session tape. Use it with `await using`, or call `merge()` or
 * `discard()` yourself:
 *
 * ```ts
 * await using fork = tapes.fork(tape, { mergeBack: !sessionId.startsWith("temp/") });
 * await fork.tape.appendEvent("loop.start", { prompt });
 * // leaving the block merges (or discards) the fork
 * ```
 */
export interface TapeFork extends AsyncDisposable {
  /** The session tape, reading and writing through the fork. */
  readonly tape: Tape;
  /** The fork's store: managed tapes live in memory, every other tape passes through. */
  readonly store: TapeStore;
  /** Whether disposing the fork merges it (true) or discards it. */
  readonly mergeBack: boolean;
  readonly state: ForkState;
  /**
   * Appends the fork's entries to the parent store and returns how many were merged. After a
   * merge the fork passes writes straight through to the parent. Calling it again does nothing.
   * @throws when the main tape's entries cannot be written; they stay in the fork for a retry.
   */
  merge(): Promise<number>;
  /** Drops the fork's entries; later writes to its tapes fail. */
  discard(): void;
  /** Copies of the entries the fork holds and has not merged, by tape (what a turn journal saves). */
  pending(): ReadonlyMap<string, readonly TapeEntry[]>;
}

/**
 * What the fork holds of one tape: the entries as they read back (ids of the fork's own, the
 * store assigns the real ones at merge) and, at the same index, each one's encoding, which
 * the merge hands to a store that takes it, so nothing is encoded twice.
 */
interface LocalTape {
  entries: TapeEntry[];
  encoded: EncodedEntry[];
  lastId: number;
}

function textParts(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  return value.filter((part) => isRecord(part) && part.type === "text");
}

/**
 * Drops non-text parts (images, audio, video) from a list-valued `content`, or from `prompt`
 * when there is no `content`: media is not persisted from forks.
 */
export function redactMedia(entry: PreparedEntry): PreparedEntry {
  const { payload } = entry;
  if ("content" in payload) return Array.isArray(payload.content) ? { ...entry, payload: { ...payload, content: textParts(payload.content) } } : entry;
  if (Array.isArray(payload.prompt)) return { ...entry, payload: { ...payload, prompt: textParts(payload.prompt) } };
  return entry;
}

function lastIndexWhere(list: readonly TapeEntry[], test: (entry: TapeEntry) => boolean): number {
  for (let index = list.length - 1; index >= 0; index--) if (test(list[index])) return index;
  return -1;
}

/** Fork of `tape` over its current store; see {@link TapeFork}. */
export function forkTape(tape: Tape, options: { mergeBack?: boolean } = {}): TapeFork {
  const parent = tape.store;
  const encodedParent = takesEncoded(parent) ? parent : null;
  const main = tape.name;
  const sidecarTapes = [...new Set(tape.sidecars.map((sidecar) => sidecarTapeName(main, sidecar.name)))];
  const managed = new Set([main, ...sidecarTapes]);
  const locals = new Map<string, LocalTape>();
  const resetTapes = new Set<string>();
  let state: ForkState = "open";
  // The `session/start` anchor and handoff this fork wrote because the parent had no anchor:
  // dropped at merge when another turn's anchor reached the parent first.
  let bootstrap: TapeEntry[] | null = null;

  const local = (name: string): LocalTape => {
    let found = locals.get(name);
    if (!found) locals.set(name, (found = { entries: [], encoded: [], lastId: 0 }));
    return found;
  };
  const isLocal = (name: string): boolean => managed.has(name) && (state === "open" || state === "merging");

  function appendLocal(name: string, batch: readonly NewTapeEntry[]): TapeEntry[] {
    if (state === "discarded") {
      throw new BubError("invalid_input", `The fork of tape ${main} was discarded, so nothing more can be written to it: open a new fork.`);
    }
    const target = local(name);
    // Encoded (and so redacted) here, once: reads within the turn and the merge use this.
    const encoded = batch.map((entry) => encodeEntryBody(redactMedia(prepareEntry(entry))));
    const stored = encoded.map(({ value }, index): TapeEntry => ({ id: target.lastId + index + 1, ...value }));
    target.entries.push(...stored);
    target.encoded.push(...encoded);
    target.lastId += stored.length;
    return stored.map(cloneEntry);
  }

  async function parentFetch(query: TapeQuery): Promise<TapeEntry[]> {
    return resetTapes.has(query.tape) ? runQuery([], query) : parent.fetchAll(query);
  }

  async function fetchManaged(query: TapeQuery): Promise<TapeEntry[]> {
    const own = locals.get(query.tape)?.entries ?? [];
    const slice = anchorSliceOf(query);
    // Parent entries come before local ones (after them when newest first), so passing the
    // query with its limit to the parent never loses an entry of the combined result.
    let fromParent: TapeEntry[] = [];
    let fromLocal: readonly TapeEntry[] = own;
    if (slice.mode === "all") {
      fromParent = await parentFetch(query);
    } else if (slice.mode === "last" || slice.mode === "after") {
      const index = lastIndexWhere(own, (entry) => isAnchorNamed(entry, slice.mode === "after" ? slice.name : undefined));
      if (index >= 0) fromLocal = own.slice(index + 1);
      else fromParent = await parentFetch(query);
    } else {
      const start = lastIndexWhere(own, (entry) => isAnchorNamed(entry, slice.start));
      const end = own.findIndex((entry, index) => index > start && isAnchorNamed(entry, slice.end));
      if (start >= 0) {
        if (end < 0) throw anchorNotFound(slice.end);
        fromLocal = own.slice(start + 1, end);
      } else {
        try {
          fromParent = await parentFetch(query);
          fromLocal = [];
        } catch (error) {
          if (!BubError.isInstance(error) || error.kind !== "not_found") throw error;
          fromParent = await parentFetch({ ...query, betweenAnchors: undefined, lastAnchor: undefined, afterAnchor: slice.start });
          if (end < 0) throw anchorNotFound(slice.end);
          fromLocal = own.slice(0, end);
        }
      }
    }
    const filter = compileFilter(query);
    const matched = fromLocal.filter(filter.matches).map(cloneEntry);
    const combined = filter.newestFirst ? [...matched.reverse(), ...fromParent] : [...fromParent, ...matched];
    return filter.limit === undefined ? combined : combined.slice(0, filter.limit);
  }

  async function mergeTape(name: string): Promise<number> {
    const target = local(name);
    if (resetTapes.has(name)) {
      await parent.reset(name);
      resetTapes.delete(name);
    }
    let merged = 0;
    while (target.entries.length > 0) {
      const batch = target.entries.splice(0);
      const encoded = target.encoded.splice(0);
      try {
        // bub's own stores take the entries as encoded in the fork; a plugin's store gets them as entries.
        await (encodedParent ? encodedParent.appendEncoded(name, encoded) : appendMany(parent, name, batch));
      } catch (error) {
        target.entries.unshift(...batch);
        target.encoded.unshift(...encoded);
        throw error;
      }
      merged += batch.length;
    }
    return merged;
  }

  /** Drops this fork's bootstrap entries when the parent has gained an anchor since (call under the tape lock). */
  async function dropLateBootstrap(): Promise<void> {
    const written = bootstrap;
    const target = locals.get(main);
    if (!written || !target || resetTapes.has(main) || !written.every((entry, index) => target.entries[index] === entry)) {
      bootstrap = null;
      return;
    }
    // Asked of the store itself, never of the turn's snapshot: the other turn merged after it was read.
    if (await hasAnchor(storeBelow(parent), main)) {
      target.entries.splice(0, written.length);
      target.encoded.splice(0, written.length);
      log.debug(`tape.fork tape=${main}: another turn started the session first; this fork's session/start is dropped`);
    }
    bootstrap = null;
  }

  /** Merges the main tape, one fork at a time per parent tape (see {@link dropLateBootstrap}). */
  const mergeMain = (): Promise<number> =>
    withTapeLock(parent, main, async () => {
      await dropLateBootstrap();
      return mergeTape(main);
    });

  const store: TapeStore = {
    listTapes: () => parent.listTapes(),
    fetchAll: (query) => (isLocal(query.tape) ? fetchManaged(query) : parent.fetchAll(query)),
    async append(name, entry) {
      if (isLocal(name) || (managed.has(name) && state === "discarded")) return onlyEntry(appendLocal(name, [entry]));
      return parent.append(name, { ...redactMedia(prepareEntry(entry)) });
    },
    async appendBatch(name, batch) {
      if (isLocal(name) || (managed.has(name) && state === "discarded")) return appendLocal(name, batch);
      return appendMany(parent, name, batch.map((entry) => ({ ...redactMedia(prepareEntry(entry)) })));
    },
    async reset(name) {
      if (!isLocal(name)) return parent.reset(name);
      if (name === main) bootstrap = null;
      locals.delete(name);
      resetTapes.add(name);
    },
  };

  const forked = tape.withStore(store);
  const view: Tape = {
    ...forked,
    async ensureBootstrapAnchor() {
      const before = locals.get(main)?.entries.length ?? 0;
      await forked.ensureBootstrapAnchor();
      const target = locals.get(main);
      if (state === "open" && target && target.entries.length > before) bootstrap = target.entries.slice(before);
    },
  };

  const fork: TapeFork = {
    tape: view,
    store,
    mergeBack: options.mergeBack ?? true,
    get state() {
      return state;
    },
    async merge() {
      if (state === "merged") return 0;
      if (state === "discarded") throw new BubError("invalid_input", `The fork of tape ${main} was discarded and cannot be merged.`);
      if (state === "merging") throw new BubError("invalid_input", `The fork of tape ${main} is already being merged.`);
      state = "merging";
      let total = 0;
      const pending = (): boolean => [...locals.values()].some((tapeEntries) => tapeEntries.entries.length > 0) || resetTapes.size > 0;
      try {
        // Writes made while merging land in the fork too; keep going until it is empty.
        do {
          for (const sidecar of sidecarTapes) {
            try {
              total += await mergeTape(sidecar);
            } catch (error) {
              log.warn(`Failed to merge sidecar "${sidecar}" into tape "${main}": ${describeError(error)}`);
              locals.delete(sidecar);
              resetTapes.delete(sidecar);
              const data = { tape: sidecar, status: "error", error: describeError(error) };
              appendLocal(main, [entries.event("sidecar.merge", data, { context: false })]);
            }
          }
          total += await mergeMain();
        } while (pending());
      } catch (error) {
        state = "open";
        throw error;
      }
      state = "merged";
      locals.clear();
      if (total > 0) log.debug(`Merged ${total} entries into tape fork "${main}"`);
      return total;
    },
    pending() {
      return new Map([...locals].map(([name, held]) => [name, held.entries.map(cloneEntry)]));
    },
    discard() {
      if (state === "merged" || state === "discarded") return;
      state = "discarded";
      locals.clear();
      resetTapes.clear();
    },
    async [Symbol.asyncDispose]() {
      if (state !== "open") return;
      if (fork.mergeBack) await fork.merge();
      else fork.discard();
    },
  };
  return fork;
}
