import { BubError } from "../kernel/errors.ts";
import type { NewTapeEntry, TapeEntry, TapeStore } from "../kernel/tape-contract.ts";

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
