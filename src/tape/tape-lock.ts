import type { TapeStore } from "../kernel/tape-contract.ts";

/** The tail of each tape's queue, per store. */
const queues = new WeakMap<TapeStore, Map<string, Promise<unknown>>>();

/**
 * Runs `body` once every earlier `withTapeLock` call for the same store and tape has
 * settled, so a check and the append that depends on it (is there an anchor yet? then write
 * one) are one step for this process. Works for any store: the key is the store object.
 * Not re-entrant: `body` must not take the same lock again.
 */
export async function withTapeLock<T>(store: TapeStore, tape: string, body: () => Promise<T>): Promise<T> {
  let tapes = queues.get(store);
  if (!tapes) queues.set(store, (tapes = new Map()));
  const previous = tapes.get(tape) ?? Promise.resolve();
  const run = previous.then(body, body);
  const tail = run.then(
    () => undefined,
    () => undefined,
  );
  tapes.set(tape, tail);
  try {
    return await run;
  } finally {
    if (tapes.get(tape) === tail) tapes.delete(tape);
  }
}
