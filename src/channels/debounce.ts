/**
 * Debouncing for chatty channels (Telegram): a burst of messages in one session becomes one
 * turn, and chatter the bot was not addressed in is only picked up shortly after it was.
 */
import { createLogger } from "../kernel/log.ts";
import type { Envelope } from "../kernel/envelope.ts";
import { ChannelMessage } from "./message.ts";

const log = createLogger("bub:channels");

/** The windows of {@link BufferedMessageHandler}, in seconds. */
export interface DebounceWindows {
  /** Quiet time after an active message before the batch is sent. */
  debounceSeconds: number;
  /** How long inactive messages wait to be batched (when they are not dropped). */
  maxWaitSeconds: number;
  /** How long after an active message inactive ones are still picked up. */
  activeTimeWindow: number;
}

/** Time and timers, replaceable in tests. */
export interface DebounceClock {
  /** Milliseconds, monotonic enough for windows. */
  now(): number;
  /**
   * Calls `callback` after `ms`; returns a cancel function. A `background` timer never keeps
   * the process alive (housekeeping such as forgetting idle buffers).
   */
  setTimer(ms: number, callback: () => void, options?: { background?: boolean }): () => void;
}

/** The real clock. */
export const systemClock: DebounceClock = {
  now: () => performance.now(),
  setTimer(ms, callback, options) {
    const timer = setTimeout(callback, ms);
    if (options?.background) timer.unref();
    return () => clearTimeout(timer);
  },
};

/**
 * Buffers one session's messages and forwards them as batches (§5.4):
 * - a message starting with `,` (a command) goes through at once;
 * - an inactive message (not addressed to the bot) is dropped unless an active one came
 *   less than `activeTimeWindow` ago; otherwise it joins the batch, sent at the latest
 *   `maxWaitSeconds` later;
 * - an active message joins the batch and (re)starts a `debounceSeconds` quiet timer.
 * A batch is one message: the last one, with every content joined by newlines.
 */
export class BufferedMessageHandler {
  readonly #forward: (message: Envelope) => void;
  readonly #windows: DebounceWindows;
  readonly #clock: DebounceClock;
  #pending: ChannelMessage[] = [];
  #lastActive: number | null = null;
  #cancelTimer: (() => void) | null = null;

  constructor(forward: (message: Envelope) => void, windows: DebounceWindows, clock: DebounceClock = systemClock) {
    this.#forward = forward;
    this.#windows = windows;
    this.#clock = clock;
  }

  /** Messages waiting in the current batch. */
  get pendingCount(): number {
    return this.#pending.length;
  }

  /** Takes one message; forwards it now, later as part of a batch, or drops it. */
  handle(message: Envelope): void {
    if (!(message instanceof ChannelMessage)) {
      this.#forward(message);
      return;
    }
    if (message.content.trimStart().startsWith(",")) {
      log.info(`session.message received command session_id=${message.sessionId}`);
      this.#forward(message);
      return;
    }
    const now = this.#clock.now();
    if (!message.isActive && (this.#lastActive === null || now - this.#lastActive > this.#windows.activeTimeWindow * 1000)) {
      this.#lastActive = null;
      log.info(`session.message received ignored session_id=${message.sessionId}`);
      return;
    }
    this.#pending.push(message);
    if (message.isActive) {
      log.info(`session.message received active session_id=${message.sessionId}`);
      this.#lastActive = now;
      this.#arm(this.#windows.debounceSeconds);
    } else if (this.#cancelTimer === null) {
      this.#arm(this.#windows.maxWaitSeconds);
    }
  }

  /**
   * Whether forgetting this handler changes nothing: no batch buffered, no timer, and no
   * active message within the active window (a fresh handler would treat the next message
   * exactly as this one would).
   */
  isIdle(now = this.#clock.now()): boolean {
    return this.#pending.length === 0 && this.#cancelTimer === null && (this.#lastActive === null || now - this.#lastActive > this.#windows.activeTimeWindow * 1000);
  }

  /** Sends the current batch now (used at shutdown so nothing buffered is lost). */
  flush(): void {
    this.#cancelTimer?.();
    this.#cancelTimer = null;
    if (this.#pending.length === 0) return;
    const batch = ChannelMessage.fromBatch(this.#pending);
    this.#pending = [];
    this.#forward(batch);
  }

  #arm(seconds: number): void {
    this.#cancelTimer?.();
    this.#cancelTimer = this.#clock.setTimer(seconds * 1000, () => {
      this.#cancelTimer = null;
      this.flush();
    });
  }
}
