/**
 * The order of admission: messages are admitted one at a time, in arrival order, each
 * admission awaited before the next begins.
 */
import type { Envelope } from "../kernel/envelope.ts";

/** What the queue admits messages with (a `TurnAdmission`). */
export interface Admitter {
  /** Admits one message. Never rejects. */
  admit(message: Envelope): Promise<void>;
}

/**
 * Holds messages until they can be admitted: before {@link start}, and while another message
 * is being admitted (including one handed in by a hook during that admission).
 */
export class InboundQueue {
  readonly #admitter: Admitter;
  readonly #onIdle: () => void;
  readonly #waiting: { message: Envelope; admitted: (() => void) | null }[] = [];
  /** A message is being admitted: the others wait in {@link #waiting}. */
  #pumping = false;
  #started = false;

  /** `onIdle` is called each time the queue has admitted everything it held. */
  constructor(admitter: Admitter, onIdle: () => void) {
    this.#admitter = admitter;
    this.#onIdle = onIdle;
  }

  /** Nothing is waiting or being admitted. */
  get idle(): boolean {
    return this.#waiting.length === 0 && !this.#pumping;
  }

  /** Starts admitting (at once, what is already queued); before this, messages only queue. */
  start(): void {
    this.#started = true;
    void this.#pump();
  }

  /** Queues `message` behind the others; resolves once it has been admitted. */
  take(message: Envelope): Promise<void> {
    return new Promise((resolve) => this.enqueue(message, resolve));
  }

  /** Queues `message` behind the others; `admitted` is called once it has been admitted. */
  enqueue(message: Envelope, admitted: (() => void) | null): void {
    this.#waiting.push({ message, admitted });
    void this.#pump();
  }

  /** Admits the queued messages in arrival order until none is left. */
  async #pump(): Promise<void> {
    if (!this.#started || this.#pumping) return;
    this.#pumping = true;
    for (let next = this.#waiting.shift(); next; next = this.#waiting.shift()) {
      await this.#admitter.admit(next.message);
      next.admitted?.();
    }
    this.#pumping = false;
    this.#onIdle();
  }
}
