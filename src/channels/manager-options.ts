/** What the channel manager (./manager.ts) can be told when it is made. */
import type { Channel, MessageHandler } from "../kernel/types.ts";
import type { DebounceClock, DebounceWindows } from "./debounce.ts";

/** Options for the `ChannelManager`. */
export interface ChannelManagerOptions {
  /**
   * Which channels to run: names, `all` (every enabled channel that is not an interface),
   * and `!name` to exclude one. Defaults to the `BUB_ENABLED_CHANNELS` setting (`all`).
   */
  enabledChannels?: readonly string[] | null;
  /**
   * Channels to use in addition to the plugins' (`provideChannels`); one with the same name
   * as a plugin's replaces it. A function receives the manager's message handler.
   */
  channels?: Iterable<Channel> | ((messageHandler: MessageHandler) => Iterable<Channel>);
  /** Seconds running turns get to finish at shutdown before they are cancelled (default 30). */
  graceSeconds?: number;
  /** Run turns with streaming model output. Defaults to the `BUB_STREAM_OUTPUT` setting. */
  streamOutput?: boolean;
  /** Debounce windows. Default to the `BUB_DEBOUNCE_SECONDS` / `BUB_MAX_WAIT_SECONDS` / `BUB_ACTIVE_TIME_WINDOW` settings. */
  debounce?: Partial<DebounceWindows>;
  /** Clock for debounce timers (tests). */
  clock?: DebounceClock;
}

