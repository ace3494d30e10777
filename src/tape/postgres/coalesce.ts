/**
 * Writes asked for while another is being written go together in the next statement: a
 * `DataLoader` (no cache) whose batch is sent at once when nothing is being written, and
 * else as soon as the statement being written ends. Under load several turns then share a
 * statement and its commit; alone, a write waits for nothing. Used for the ends of queued
 * turns (../../channels/cluster/graphile.ts) and the delivery ledger's keyed records
 * (../../channels/delivery/postgres-store.ts).
 */
import DataLoader from "dataloader";

/**
 * A loader over `write`, which writes a batch (at most `maxBatchSize`) in one statement and
 * answers one value per item, in order. A failed write fails every item of its batch.
 *
 * ```ts
 * const ends = coalescing((batch: readonly End[]) => endAll(batch), 64);
 * await ends.load(end); // one statement for every end loaded meanwhile
 * ```
 */
export function coalescing<K, V>(write: (batch: readonly K[]) => Promise<V[]>, maxBatchSize: number): DataLoader<K, V> {
  let writing: Promise<unknown> | null = null;
  return new DataLoader<K, V>(
    async (batch) => {
      const written = write(batch);
      const marker = written.catch(() => undefined);
      writing = marker;
      try {
        return await written;
      } finally {
        if (writing === marker) writing = null;
      }
    },
    { cache: false, maxBatchSize, batchScheduleFn: (dispatch) => void (writing ?? Promise.resolve()).then(dispatch) },
  );
}
