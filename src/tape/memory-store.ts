import type { NewTapeEntry, TapeEntry, TapeNameRecord, TapeQuery, TapeStore } from "../kernel/tape-contract.ts";
import { onlyEntry, type EncodedAppendStore } from "./append-many.ts";
import { cloneEntry, encodeNewEntry, type EncodedEntry } from "./entry.ts";
import { runQuery } from "./query-engine.ts";
import { isSidecarTapeName } from "./sidecar.ts";

interface MemoryTape {
  entries: TapeEntry[];
  lastId: number;
}

/**
 * A tape store that keeps everything in memory: for tests and for `temp/` sessions that
 * are never persisted. Entries go through the same encoding as the file store, and every
 * read (and every `append`/`appendBatch` answer) returns copies.
 *
 * ```ts
 * const store = createMemoryTapeStore();
 * const stored = await store.append("ws__session", entries.event("ping"));
 * stored.id; // 1
 * ```
 */
export function createMemoryTapeStore(): EncodedAppendStore & Required<Pick<TapeStore, "appendBatch" | "close" | "recordTapeName" | "tapeNames">> {
  const tapes = new Map<string, MemoryTape>();
  const names = new Map<string, TapeNameRecord>();

  /** Stores encoded entries; the answer is what the store holds (callers copy it where they hand it on). */
  function appendEncoded(tape: string, encoded: readonly EncodedEntry[]): TapeEntry[] {
    const state = tapes.get(tape) ?? { entries: [], lastId: 0 };
    const stored = encoded.map(({ value }, index): TapeEntry => ({ id: state.lastId + index + 1, ...value }));
    state.entries.push(...stored);
    state.lastId += stored.length;
    tapes.set(tape, state);
    return stored;
  }

  const appendAll = (tape: string, batch: readonly NewTapeEntry[]): TapeEntry[] =>
    appendEncoded(tape, batch.map(encodeNewEntry)).map(cloneEntry);

  return {
    async listTapes() {
      return [...tapes.keys()].filter((name) => !isSidecarTapeName(name)).sort();
    },
    async fetchAll(query: TapeQuery) {
      return runQuery(tapes.get(query.tape)?.entries ?? [], query).map(cloneEntry);
    },
    async append(tape, entry) {
      return onlyEntry(appendAll(tape, [entry]));
    },
    async appendBatch(tape, batch) {
      return appendAll(tape, batch);
    },
    async appendEncoded(tape, encoded) {
      return appendEncoded(tape, encoded);
    },
    async reset(tape) {
      tapes.delete(tape);
    },
    async recordTapeName(record) {
      if (!names.has(record.tape)) names.set(record.tape, { tape: record.tape, sessionId: record.sessionId, workspace: record.workspace });
    },
    async tapeNames() {
      return [...names.values()];
    },
    async close() {},
  };
}
