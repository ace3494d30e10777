/**
 * The order of admission: messages are admitted one at a time, in arrival order. Admissions
 * that answer synchronously run back to back; one that returns a promise is waited for
 * before the next message.
 */
import type { Envelope } from "../kernel/envelope.ts";

const RESOLVED: Promise<void> = Promise.resolve();

/** What the queue admits messages with (a `TurnAdmission`). */
export interface Admitter {
  /** Admits one message; a promise only when admission took one. Never throws or rejects. */
  admit(message: Envelope): Promise<void> | undefined;
}

/**
 * Holds messages until they can be admitted: before {@link start}, and while another message
 * is being admitted (including one handed in by a hook during that admission).
 */
export class InboundQueue {
  readonly #admitter: Admitter;
  readonly #onIdle: () => void;
  /** Messages waiting for admission, flat: message, then its admitted callback (or null). */
  #inbound: unknown[] = [];
  /** Index of the next message in {@link #inbound}. */
  #head = 0;
  /** A message is being admitted (synchronously or not): the others wait in {@link #inbound}. */
  #pumping = false;
  #started = false;

  /** `onIdle` is called each time the queue has admitted everything it held. */
  constructor(admitter: Admitter, onIdle: () => void) {
    this.#admitter = admitter;
    this.#onIdle = onIdle;
  }

  /** Nothing is waiting or being admitted. */
  get idle(): boolean {
    return this.#head === this.#inbound.length && !this.#pumping;
  }

  /** Starts admitting (at once, what is already queued); before this, messages only queue. */
  start(): void {
    this.#started = true;
    this.#pump();
  }

  /**
   * Admits `message`, resolving once it is admitted. With nothing ahead of it, it is admitted
   * (and its turn started) right away, and when that took no promise the caller gets an
   * already settled one; otherwise it waits its turn in the queue.
   */
  take(message: Envelope): Promise<void> {
    if (!this.#started || this.#pumping || this.#head < this.#inbound.length) return new Promise((resolve) => this.enqueue(message, resolve));
    // Taken while admitting it: a message handed in meanwhile (by a hook) queues behind it.
    this.#pumping = true;
    const pending = this.#admitter.admit(message);
    if (pending !== undefined) return pending.then(this.#resume);
    this.#pumping = false;
    this.#pump();
    return RESOLVED;
  }

  /** Queues `message` behind the others; `admitted` is called once it has been admitted. */
  enqueue(message: Envelope, admitted: (() => void) | null): void {
    this.#inbound.push(message, admitted);
    this.#pump();
  }

  /** Continues the queue after an admission that took a promise. */
  readonly #resume = (): void => {
    this.#pumping = false;
    this.#pump();
  };

  /** Admits the queued messages, in arrival order, until one takes a promise or none is left. */
  #pump(): void {
    if (!this.#started || this.#pumping) return;
    this.#pumping = true;
    const inbound = this.#inbound;
    while (this.#head < inbound.length) {
      const message = inbound[this.#head] as Envelope;
      const admitted = inbound[this.#head + 1] as (() => void) | null;
      inbound[this.#head] = inbound[this.#head + 1] = undefined;
      this.#head += 2;
      const pending = this.#admitter.admit(message);
      if (pending !== undefined) {
        void pending.then(() => {
          admitted?.();
          this.#resume();
        });
        return;
      }
      admitted?.();
    }
    if (this.#head > 0) {
      this.#inbound = [];
      this.#head = 0;
    }
    this.#pumping = false;
    this.#onIdle();
  }
}
