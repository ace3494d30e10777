/**
 * Debounce for the channel manager: one {@link BufferedMessageHandler} per channel and
 * session, with windows from the manager's options or the settings.
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
 * Buffers the messages of debounced channels, keyed by channel and session (else chat), and
 * hands each batch to `forward` as one message.
 */
export class ChannelDebouncers {
  readonly #forward: (batch: Envelope) => void;
  readonly #windows: () => DebounceWindows;
  readonly #clock: DebounceClock;
  readonly #debouncers = new Map<string, BufferedMessageHandler>();

  /** `windows` is asked once per new channel and session. */
  constructor(forward: (batch: Envelope) => void, windows: () => DebounceWindows, clock: DebounceClock = systemClock) {
    this.#forward = forward;
    this.#windows = windows;
    this.#clock = clock;
  }

  /** Buffers a message of channel `channelName`. */
  handle(channelName: string, message: Envelope): void {
    const key = `${channelName}\u0000${message.sessionId ?? (message.chatId || "default")}`;
    let debouncer = this.#debouncers.get(key);
    if (!debouncer) {
      debouncer = new BufferedMessageHandler(this.#forward, this.#windows(), this.#clock);
      this.#debouncers.set(key, debouncer);
    }
    debouncer.handle(message);
  }

  /** Sends every buffered batch now and forgets the buffers. */
  flushAll(): void {
    for (const debouncer of this.#debouncers.values()) debouncer.flush();
    this.#debouncers.clear();
  }
}
