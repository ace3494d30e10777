import type { NewTapeEntry, TapeEntry, TapeStore } from "../kernel/tape-contract.ts";

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
