/**
 * A bound on how many turns run at once across every session (`BUB_MAX_CONCURRENT_TURNS`):
 * a turn takes a slot before its pipeline starts and gives it back once the pipeline has
 * returned; turns that find no free slot wait in arrival order.
 */

/** First-in-first-out slots; `limit` of 0 means no bound. */
export class TurnSlots {
  readonly #limit: number;
  #used = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(limit: number) {
    this.#limit = limit > 0 ? Math.floor(limit) : Number.POSITIVE_INFINITY;
  }

  /** Takes a slot now (true) or queues `start` to run, holding a slot, once one is free (false). */
  acquire(start: () => void): boolean {
    if (this.#used < this.#limit) {
      this.#used++;
      return true;
    }
    this.#waiting.push(start);
    return false;
  }

  /** Gives a slot back; the longest-waiting turn (if any) takes it over and starts. */
  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#used--;
  }
}
