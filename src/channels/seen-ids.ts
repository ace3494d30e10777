/**
 * The exact set of item ids an inbound journal has seen lately, each with when it was first
 * recorded, so a repeat is recognised by its id alone, whatever order ids arrive in.
 *
 * Why a window and not a high-water mark: Telegram delivers webhook updates in parallel, so
 * update 2002 may arrive after 2005; "every id up to the highest counts as seen" would
 * answer 2002 and never run it. Why the window is safe: Telegram keeps an update it could not
 * deliver for at most 24 hours, so a repeat of an id (a delivery whose answer got lost)
 * arrives within a day of its first copy. An id is therefore remembered for
 * {@link SEEN_KEEP_SECONDS} (a day and an hour) after it was first recorded, and then
 * forgotten; and at most {@link SEEN_MAX} ids are remembered (the oldest are forgotten
 * first), which bounds memory and the journal's size. An id forgotten early because of that
 * cap (more than {@link SEEN_MAX} updates in a day) would run again if Telegram sent it again:
 * the window errs towards answering twice, never towards dropping a message.
 */

/** How long an id is remembered after it was first recorded: Telegram's 24 hours, and an hour to spare. */
export const SEEN_KEEP_SECONDS = 25 * 60 * 60;
/** The most ids remembered at once. */
export const SEEN_MAX = 100_000;

/**
 * The serialised form (the journal's `mark` line): runs of `[at, id, id, ...]`, each run the
 * ids first recorded at Unix time `at` (seconds), oldest run first.
 */
export type SeenRuns = number[][];

/** Options of {@link SeenIds}. */
export interface SeenIdsOptions {
  /** Seconds an id is remembered (default {@link SEEN_KEEP_SECONDS}). */
  keepSeconds?: number;
  /** Ids remembered at most (default {@link SEEN_MAX}). */
  max?: number;
  /** The current Unix time in seconds (tests set it). */
  now?: () => number;
}

/** The current Unix time in whole seconds, rounded up (an id is kept a little longer, never shorter). */
export function unixSeconds(): number {
  return Math.ceil(Date.now() / 1000);
}

/** See the module comment. */
export class SeenIds {
  /** Id → Unix time (seconds) it was first recorded, in the order recorded. */
  readonly #at = new Map<number, number>();
  readonly #keepSeconds: number;
  readonly #max: number;
  readonly now: () => number;

  constructor(options: SeenIdsOptions = {}) {
    this.#keepSeconds = Math.max(0, options.keepSeconds ?? SEEN_KEEP_SECONDS);
    this.#max = Math.max(1, options.max ?? SEEN_MAX);
    this.now = options.now ?? unixSeconds;
  }

  /** How many ids are remembered. */
  get size(): number {
    return this.#at.size;
  }

  /** Whether `id` was recorded and not yet forgotten. */
  has(id: number): boolean {
    return this.#at.has(id);
  }

  /**
   * Remembers `id` as recorded at `at` (default now), unless it is already remembered; the
   * oldest ids are forgotten beyond the cap.
   */
  add(id: number, at = this.now()): void {
    if (this.#at.has(id)) return;
    this.#at.set(id, at);
    while (this.#at.size > this.#max) {
      const oldest = this.#at.keys().next();
      if (oldest.done === true) break;
      this.#at.delete(oldest.value);
    }
  }

  /** Forgets the ids recorded more than the window ago. */
  prune(): void {
    const limit = this.now() - this.#keepSeconds;
    for (const [id, at] of this.#at) {
      if (at < limit) this.#at.delete(id);
    }
  }

  /** When `id` was first recorded (Unix seconds), or undefined when it is not remembered. */
  atOf(id: number): number | undefined {
    return this.#at.get(id);
  }

  /** The remembered ids (those `keep` accepts) as runs (see {@link SeenRuns}), oldest first. */
  toRuns(keep: (id: number) => boolean = () => true): SeenRuns {
    const entries = [...this.#at].filter(([id]) => keep(id)).sort((a, b) => a[1] - b[1]);
    const runs: SeenRuns = [];
    let run: number[] | null = null;
    for (const [id, at] of entries) {
      if (run?.[0] !== at) {
        run = [at];
        runs.push(run);
      }
      run.push(id);
    }
    return runs;
  }

  /** Remembers the ids of `runs` (read from a `mark` line); what is not a run of whole numbers is skipped. */
  addRuns(runs: unknown): void {
    if (!Array.isArray(runs)) return;
    const read: [number, number][] = [];
    for (const run of runs) {
      if (!Array.isArray(run) || !run.every((value) => Number.isSafeInteger(value))) continue;
      const [at, ...ids] = run;
      if (typeof at !== "number") continue;
      for (const id of ids) if (typeof id === "number") read.push([id, at]);
    }
    for (const [id, at] of read.sort((a, b) => a[1] - b[1])) this.add(id, at);
  }
}
