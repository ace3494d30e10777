/**
 * Waiting for the channel manager to go idle: nothing queued, admitted-and-waiting or
 * running. Whoever changes what runs calls {@link IdleWaiters.check}; tests, benchmarks and
 * the graceful shutdown wait with {@link IdleWaiters.wait}.
 */
export class IdleWaiters {
  readonly #isIdle: () => boolean;
  #waiters: (() => void)[] = [];

  constructor(isIdle: () => boolean) {
    this.#isIdle = isIdle;
  }

  /** Resolves at once when idle, else at the first {@link check} that finds it idle. */
  wait(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Wakes every waiter when idle now. */
  check(): void {
    if (this.#waiters.length === 0 || !this.#isIdle()) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const resolve of waiters) resolve();
  }
}
