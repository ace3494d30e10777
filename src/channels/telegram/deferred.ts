/**
 * The Telegram channel as the builtin plugin offers it: a stand-in that imports the channel
 * (and with it grammY and undici) the first time it is started or asked to send, so commands
 * that never run the gateway do not load that code.
 */
import type { Envelope } from "../../kernel/envelope.ts";
import type { Channel } from "../../kernel/types.ts";
import type { TelegramChannel, TelegramChannelOptions, TelegramFramework } from "./channel.ts";
import { hasTelegramToken } from "./settings.ts";

/** Behaves as {@link TelegramChannel}, whose module it imports on first use. */
export class DeferredTelegramChannel implements Channel {
  readonly name = "telegram";
  readonly kind = "channel" as const;
  readonly needsDebounce = true;
  readonly #framework: TelegramFramework;
  readonly #options: TelegramChannelOptions;
  #channel: Promise<TelegramChannel> | null = null;

  constructor(framework: TelegramFramework, options: TelegramChannelOptions) {
    this.#framework = framework;
    this.#options = options;
  }

  /** Enabled when a bot token is configured (`BUB_TELEGRAM_TOKEN`). */
  get enabled(): boolean {
    return hasTelegramToken(this.#framework.settings);
  }

  #load(): Promise<TelegramChannel> {
    return (this.#channel ??= import("./channel.ts").then(({ createTelegramChannel }) => createTelegramChannel(this.#framework, this.#options)));
  }

  async start(signal: AbortSignal): Promise<void> {
    await (await this.#load()).start(signal);
  }

  /** Stops the channel if it was ever loaded (one that never started has nothing to stop). */
  async stop(): Promise<void> {
    if (this.#channel) await (await this.#channel).stop();
  }

  async send(message: Envelope): Promise<void> {
    await (await this.#load()).send(message);
  }
}
