/**
 * The random-fault mode of the fake Bot API (./fake-telegram.ts `randomFaults`): a share of
 * the calls of some methods fails retryably, half `502 Bad Gateway`, half `429` with a
 * `retry_after`. The draws come from a seeded generator, so a run with the same seed and the
 * same calls in the same order fails the same calls the same way.
 */
import type { FakeFailure } from "./fake-telegram-types.ts";

/** What {@link RandomFaults} is set up with. */
export interface RandomFaultsInit {
  methods: readonly string[];
  /** The probability that a call fails, 0 to 1. */
  rate: number;
  seed: number;
  /** The `retry_after` of the 429s, in seconds (default 1). */
  retryAfter?: number;
}

/** See the module comment. */
export class RandomFaults {
  readonly #methods: Set<string>;
  readonly #rate: number;
  readonly #retryAfter: number;
  readonly #next: () => number;
  /** How many calls were failed, by status. */
  readonly injected = { 429: 0, 502: 0 };

  constructor(init: RandomFaultsInit) {
    this.#methods = new Set(init.methods);
    this.#rate = init.rate;
    this.#retryAfter = init.retryAfter ?? 1;
    this.#next = seededRandom(init.seed);
  }

  /** The failure drawn for a call of `method`, or undefined when it succeeds. */
  draw(method: string): FakeFailure | undefined {
    if (!this.#methods.has(method) || this.#next() >= this.#rate) return undefined;
    if (this.#next() < 0.5) {
      this.injected[502]++;
      return { status: 502, description: "Bad Gateway" };
    }
    this.injected[429]++;
    return { status: 429, retryAfter: this.#retryAfter };
  }
}

/** mulberry32: a small seeded generator of numbers in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
