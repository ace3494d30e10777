/**
 * Debounce for the channel manager: one {@link BufferedMessageHandler} per channel and
 * session, with windows from the manager's options or the settings, kept while the session
 * is in use and forgotten once it is idle (see {@link IDLE_SWEEP_SECONDS}).
 */
import type { Envelope } from "../kernel/envelope.ts";
import type { BubFramework } from "../kernel/framework.ts";
import { BufferedMessageHandler, systemClock, type DebounceClock, type DebounceWindows } from "./debounce.ts";

function settingNumber(framework: BubFramework, key: string, fallback: number): number {
  const value = framework.settings.getValue(key, fallback);
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

/**
 * The windows `given` sets, the others from the `BUB_DEBOUNCE_SECONDS` (1),
 * `BUB_MAX_WAIT_SECONDS` (10) and `BUB_ACTIVE_TIME_WINDOW` (60) settings.
 */
export function debounceWindows(framework: BubFramework, given: Partial<DebounceWindows> = {}): DebounceWindows {
  return {
    debounceSeconds: given.debounceSeconds ?? settingNumber(framework, "debounce_seconds", 1),
    maxWaitSeconds: given.maxWaitSeconds ?? settingNumber(framework, "max_wait_seconds", 10),
    activeTimeWindow: given.activeTimeWindow ?? settingNumber(framework, "active_time_window", 60),
  };
}

/**
 * How often idle buffers are looked for while any exist, in seconds. A session's buffer is
 * forgotten at the first look after it went idle: nothing buffered and its last active
 * message older than the active window (`BUB_ACTIVE_TIME_WINDOW`, 60 s by default), so
 * within that window and this many seconds more.
 */
export const IDLE_SWEEP_SECONDS = 10;

/**
 * Buffers the messages of debounced channels, keyed by channel and session (else chat), and
 * hands each batch to `forward` as one message. Holds a buffer per session in use only: a
 * background timer forgets the idle ones, so memory follows the sessions being talked in,
 * not every session ever seen.
 */
export class ChannelDebouncers {
  readonly #forward: (batch: Envelope) => void;
  readonly #windows: () => DebounceWindows;
  readonly #clock: DebounceClock;
  readonly #debouncers = new Map<string, BufferedMessageHandler>();
  #cancelSweep: (() => void) | null = null;

  /** `windows` is asked once per new channel and session. */
  constructor(forward: (batch: Envelope) => void, windows: () => DebounceWindows, clock: DebounceClock = systemClock) {
    this.#forward = forward;
    this.#windows = windows;
    this.#clock = clock;
  }

  /** How many sessions have a buffer (in use, or idle since the last sweep). */
  get size(): number {
    return this.#debouncers.size;
  }

  /** Buffers a message of channel `channelName`. */
  handle(channelName: string, message: Envelope): void {
    const key = `${channelName}\u0000${message.sessionId ?? (message.chatId || "default")}`;
    let debouncer = this.#debouncers.get(key);
    if (!debouncer) {
      debouncer = new BufferedMessageHandler(this.#forward, this.#windows(), this.#clock);
      this.#debouncers.set(key, debouncer);
    }
    this.#armSweep();
    debouncer.handle(message);
  }

  /** Sends every buffered batch now and forgets the buffers. */
  flushAll(): void {
    this.#cancelSweep?.();
    this.#cancelSweep = null;
    for (const debouncer of this.#debouncers.values()) debouncer.flush();
    this.#debouncers.clear();
  }

  #armSweep(): void {
    this.#cancelSweep ??= this.#clock.setTimer(IDLE_SWEEP_SECONDS * 1000, () => this.#sweep(), { background: true });
  }

  /** Forgets the idle buffers; looks again later while any buffer is left. */
  #sweep(): void {
    this.#cancelSweep = null;
    const now = this.#clock.now();
    for (const [key, debouncer] of this.#debouncers) {
      if (debouncer.isIdle(now)) this.#debouncers.delete(key);
    }
    if (this.#debouncers.size > 0) this.#armSweep();
  }
}
