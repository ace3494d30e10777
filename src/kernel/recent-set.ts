/**
 * A set with a bound, for "this process has done X for key K already" memories keyed by
 * session, tape or chat: a long-running gateway meets new keys for ever, so such a memory
 * must forget. Past `max` keys the least recently used one is forgotten, which only costs
 * doing X once more for it. No imports, no side effects.
 */

/**
 * At most `max` keys; {@link has} and {@link add} make a key the most recent, and adding
 * past the bound forgets the least recent.
 *
 * ```ts
 * const recorded = new RecentSet<string>(4096);
 * if (!recorded.has(tape)) {
 *   await write(tape);
 *   recorded.add(tape);
 * }
 * ```
 */
export class RecentSet<K> {
  /** Insertion order is recency order: the first key is the least recently used. */
  readonly #keys = new Set<K>();
  /** The most keys kept. */
  readonly max: number;

  /** `max` must be a positive integer. */
  constructor(max: number) {
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`RecentSet: max must be a positive integer, got ${max}`);
    this.max = max;
  }

  /** How many keys are kept (never more than {@link max}). */
  get size(): number {
    return this.#keys.size;
  }

  /** Whether `key` is kept; a kept key becomes the most recent. */
  has(key: K): boolean {
    if (!this.#keys.delete(key)) return false;
    this.#keys.add(key);
    return true;
  }

  /** Keeps `key` as the most recent, forgetting the least recent ones past {@link max}. */
  add(key: K): this {
    this.#keys.delete(key);
    this.#keys.add(key);
    for (const oldest of this.#keys) {
      if (this.#keys.size <= this.max) break;
      this.#keys.delete(oldest);
    }
    return this;
  }

  /** Forgets `key`; true when it was kept. */
  delete(key: K): boolean {
    return this.#keys.delete(key);
  }

  /** Forgets every key. */
  clear(): void {
    this.#keys.clear();
  }
}
