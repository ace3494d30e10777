/**
 * {@link TapeStats} of every session tape of a store: the store's own `tapeStats` when it
 * has one (the file and SQLite stores read them without decoding entries), else from its
 * entries.
 */
import type { TapeEntry, TapeStats, TapeStore } from "../kernel/tape-contract.ts";
import { countTurns } from "./turns.ts";

/** The stats of one tape from its entries (oldest first); `bytes` is the length of their JSON text. */
export function statsOfEntries(tape: string, entries: readonly TapeEntry[]): TapeStats {
  let bytes = 0;
  for (const entry of entries) bytes += Buffer.byteLength(JSON.stringify(entry)) + 1;
  return { tape, entries: entries.length, turns: countTurns(entries), lastDate: entries.at(-1)?.date ?? null, bytes };
}

/**
 * Stats of every session tape of `store`, sorted by tape name.
 *
 * ```ts
 * for (const { tape, entries, turns } of await tapeStatsOf(store)) console.log(tape, entries, turns);
 * ```
 */
export async function tapeStatsOf(store: TapeStore, concurrency = 8): Promise<TapeStats[]> {
  if (store.tapeStats) return store.tapeStats();
  const tapes = await store.listTapes();
  const stats: TapeStats[] = new Array(tapes.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tapes.length) {
      const index = next++;
      const tape = tapes[index];
      stats[index] = statsOfEntries(tape, await store.fetchAll({ tape }));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, tapes.length) }, worker));
  return stats;
}
