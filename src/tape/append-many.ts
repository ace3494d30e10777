import { BubError } from "../kernel/errors.ts";
import type { NewTapeEntry, TapeEntry, TapeStore } from "../kernel/tape-contract.ts";
import type { EncodedEntry } from "./entry.ts";

/**
 * The one entry a batch append of one entry stored.
 * @throws BubError `unknown` when the store returned none.
 */
export function onlyEntry(stored: readonly TapeEntry[]): TapeEntry {
  const entry = stored.at(0);
  if (entry === undefined) throw new BubError("unknown", "The tape store stored no entry for an append of one.");
  return entry;
}

/**
 * Appends entries in order through `appendBatch` when the store has it (one durable write),
 * else one by one.
 */
export async function appendMany(store: TapeStore, tape: string, batch: readonly NewTapeEntry[]): Promise<TapeEntry[]> {
  if (batch.length === 0) return [];
  if (store.appendBatch) return store.appendBatch(tape, batch);
  const stored: TapeEntry[] = [];
  for (const entry of batch) stored.push(await store.append(tape, entry));
  return stored;
}

/**
 * A store of bub's own (files, SQLite, PostgreSQL, memory) that also takes entries encoded
 * already ({@link EncodedEntry}: prepared, redacted, serialized). A turn's fork merges through
 * it, so an entry is encoded once, when the turn writes it. Not part of the plugin contract:
 * a plugin's store gets the same entries through `appendBatch`.
 */
export interface EncodedAppendStore extends TapeStore {
  /**
   * Appends encoded entries in order, durably, assigning their ids, and answers the stored
   * entries. They share their payload and meta with `encoded`'s values: read, never change them.
   */
  appendEncoded(tape: string, encoded: readonly EncodedEntry[]): Promise<TapeEntry[]>;
}

/** Whether `store` takes encoded entries (see {@link EncodedAppendStore}). */
export function takesEncoded(store: TapeStore): store is EncodedAppendStore {
  return "appendEncoded" in store && typeof store.appendEncoded === "function";
}
