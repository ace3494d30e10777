/**
 * The REPL's turns in flight: lines submitted whose turn has not ended, and the streams being
 * rendered. The REPL is busy while either is non-empty.
 */
import type { Envelope } from "../../kernel/envelope.ts";

/** A turn's stream being rendered; aborting the controller stops the rendering. */
export interface ActiveStream {
  readonly message: Envelope;
  readonly controller: AbortController;
}

/**
 * Tracks submitted turns (from submission, or their lifespan's enter, until their lifespan
 * exits) and live streams. `onChange(busy)` is called after every change, before anyone
 * waiting in {@link whenIdle} is released.
 */
export class InFlightTurns {
  readonly #awaiting = new Set<Envelope>();
  readonly #streams = new Set<ActiveStream>();
  readonly #onChange: (busy: boolean) => void;
  #idleWaiters: (() => void)[] = [];

  constructor(onChange: (busy: boolean) => void) {
    this.#onChange = onChange;
  }

  /** True while a submitted turn has not finished. */
  get busy(): boolean {
    return this.#awaiting.size > 0 || this.#streams.size > 0;
  }

  /** Resolves once no turn is in flight. */
  whenIdle(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** A turn for `message` is under way. */
  submitted(message: Envelope): void {
    this.#awaiting.add(message);
    this.#changed();
  }

  /** The turn for `message` is over (its lifespan exited, or it could not be handed in). */
  ended(message: Envelope): void {
    this.#awaiting.delete(message);
    this.#changed();
  }

  /** A failed turn may never exit its lifespan: unless a stream is live, stop waiting for any. */
  failed(): void {
    if (this.#streams.size > 0) return;
    this.#awaiting.clear();
    this.#changed();
  }

  /** Registers a stream being rendered for `message`. */
  openStream(message: Envelope): ActiveStream {
    const active: ActiveStream = { message, controller: new AbortController() };
    this.#streams.add(active);
    this.#changed();
    return active;
  }

  /** The stream is done; its turn (else the oldest submitted one) is no longer waited for. */
  closeStream(active: ActiveStream): void {
    this.#streams.delete(active);
    if (!this.#awaiting.delete(active.message)) {
      const oldest = this.#awaiting.values().next();
      if (!oldest.done) this.#awaiting.delete(oldest.value);
    }
    this.#changed();
  }

  /** Aborts every live stream. */
  abortStreams(): void {
    for (const stream of this.#streams) stream.controller.abort();
  }

  /**
   * Aborts every live stream and stops waiting for submitted turns. `announce` is told whether
   * a stream was live, before `onChange`.
   */
  interrupt(announce?: (hadStreams: boolean) => void): void {
    const hadStreams = this.#streams.size > 0;
    this.abortStreams();
    this.#awaiting.clear();
    announce?.(hadStreams);
    this.#changed();
  }

  #changed(): void {
    const busy = this.busy;
    this.#onChange(busy);
    if (!busy) {
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }
}
