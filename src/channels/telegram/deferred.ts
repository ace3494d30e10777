/**
 * The Telegram channel as the builtin plugin offers it: a stand-in that imports the channel
 * (and with it grammY and undici) the first time it is started or asked to send, so commands
 * that never run the gateway do not load that code. While it runs, the model has the
 * `telegram.send` and `telegram.edit` tools (./tools.ts); `telegram.send` goes through the
 * channel's delivery ledger.
 */
import type { Envelope } from "../../kernel/envelope.ts";
import type { TurnContext } from "../../kernel/turn-context.ts";
import type { Channel } from "../../kernel/types.ts";
import type { ApprovalAnswer, ApprovalRequest } from "../../kernel/approval.ts";
import type { TelegramChannel, TelegramChannelOptions, TelegramFramework } from "./channel.ts";
import { rememberSettingsSecrets } from "../../config/secrets.ts";
import { hasTelegramToken } from "./settings.ts";

/** Behaves as {@link TelegramChannel}, whose module it imports on first use. */
export class DeferredTelegramChannel implements Channel {
  readonly name = "telegram";
  readonly kind = "channel" as const;
  readonly needsDebounce = true;
  readonly #framework: TelegramFramework;
  readonly #options: TelegramChannelOptions;
  #channel: Promise<TelegramChannel> | null = null;
  #removeTools: (() => void) | null = null;

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

  /** Starts the channel, then offers the model `telegram.send` and `telegram.edit` (run through the channel's client). */
  async start(signal: AbortSignal): Promise<void> {
    rememberSettingsSecrets(this.#framework.settings); // the token is redacted from log lines from the start
    const channel = await this.#load();
    await channel.start(signal);
    const { registerTelegramTools } = await import("./tools.ts");
    this.#removeTools?.();
    this.#removeTools = registerTelegramTools(this.#framework, () => channel.api, () => channel.ledgerSend);
  }

  /** Stops the channel if it was ever loaded (one that never started has nothing to stop), and removes its tools. */
  async stop(): Promise<void> {
    this.#removeTools?.();
    this.#removeTools = null;
    if (this.#channel) await (await this.#channel).stop();
  }

  async send(message: Envelope, context?: TurnContext): Promise<void> {
    await (await this.#load()).send(message, context);
  }

  /** Asks with Approve / Deny buttons in the turn's chat (see ./approval.ts). */
  async askApproval(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    return (await this.#load()).askApproval(request, signal);
  }
}
