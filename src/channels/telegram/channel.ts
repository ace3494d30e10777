/**
 * The `telegram` channel: a grammY bot on long polling. grammY and undici are imported
 * only when the channel starts, so `bub --help` never loads them.
 */
import type { ApiClientOptions, Bot, Context } from "grammy";
import type { Message, User } from "grammy/types";
import { createLogger } from "../../kernel/log.ts";
import { BubError, describeError } from "../../kernel/errors.ts";
import { contentOf, fieldOf, type Envelope } from "../../kernel/envelope.ts";
import type { BubFramework } from "../../kernel/framework.ts";
import type { Channel, MessageHandler } from "../../kernel/types.ts";
import { ChannelMessage, type MediaItem } from "../message.ts";
import { downloadFile } from "./download.ts";
import { isAddressed, mediaKind, messageContent, messageMedia, messageMetadata } from "./parse.ts";
import type { TelegramConnection, TelegramRetryOptions } from "./client.ts";
import { hasTelegramToken, parseAllowlist, telegramSettings, type TelegramSettings } from "./settings.ts";
import { previewOf, splitMessage } from "./split.ts";

const log = createLogger("bub:telegram");

/** Shown when the bot would otherwise answer anyone (the agent has a shell). */
export const CLOSED_BY_DEFAULT =
  "Telegram is closed by default: the agent can run shell commands, so say who may talk to the bot. " +
  "Set BUB_TELEGRAM_ALLOW_USERS (comma-separated user ids or usernames) or BUB_TELEGRAM_ALLOW_CHATS (comma-separated chat ids), " +
  "or set BUB_TELEGRAM_ALLOW_ALL=true to serve everyone.";

const NOT_ALLOWED = "You are not allowed to chat with me. Please deploy your own instance of Bub.";
const ACCESS_DENIED = "Access denied.";
/** A reply longer than this many messages goes out as a preview plus a file (`BUB_TELEGRAM_MAX_MESSAGES`). */
const DEFAULT_MAX_MESSAGES = 5;
/** The file a long reply is attached as. */
export const ANSWER_FILE = "answer.md";
/** The longest preview of a reply sent as a file, in UTF-16 units. */
const PREVIEW_CHARS = 1000;
const TYPING_EVERY_MS = 4000;

/** Options for {@link TelegramChannel}. */
export interface TelegramChannelOptions {
  /** Where received messages go (the channel manager's handler). */
  messageHandler: MessageHandler;
  /** How Bot API calls are retried (bounds for @grammyjs/auto-retry). */
  retry?: TelegramRetryOptions;
}

/** The parts of the framework the channel uses. */
export type TelegramFramework = Pick<BubFramework, "settings">;

interface TypingLoop {
  users: number;
  timer: NodeJS.Timeout;
}

/** The text to send for an outbound: the `message` field of JSON content, else the content itself. */
function outboundText(message: Envelope): string {
  const content = contentOf(message);
  const trimmed = content.trim();
  if (trimmed.startsWith("{")) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
        const text = (parsed as Record<string, unknown>).message;
        return text === undefined || text === null ? "" : String(text);
      }
    } catch {
      // Not JSON: sent as written.
    }
  }
  return content;
}

/**
 * Serves a Telegram bot (§5.7, with the departures in docs/channels.md): closed unless an
 * allowlist is set or `BUB_TELEGRAM_ALLOW_ALL=true`; `/start`; `/bub <text>`; in groups
 * only messages that address the bot start a turn; photos reach the model as images; a
 * typing indicator shows while a turn runs; replies are split at Telegram's limit; Bot API
 * calls are retried.
 */
export class TelegramChannel implements Channel {
  readonly name = "telegram";
  readonly kind = "channel" as const;
  readonly needsDebounce = true;
  readonly #framework: TelegramFramework;
  readonly #options: TelegramChannelOptions;
  #bot: Bot | null = null;
  #botInfo: User | null = null;
  #settings: TelegramSettings | null = null;
  #connection: TelegramConnection | null = null;
  #describeError: (error: unknown) => string = describeError;
  #users = new Set<string>();
  #chats = new Set<string>();
  #polling: Promise<void> | null = null;
  readonly #typing = new Map<string, TypingLoop>();

  constructor(framework: TelegramFramework, options: TelegramChannelOptions) {
    this.#framework = framework;
    this.#options = options;
  }

  /** Enabled when a bot token is configured (`BUB_TELEGRAM_TOKEN`). */
  get enabled(): boolean {
    return hasTelegramToken(this.#framework.settings);
  }

  /** The running bot's Bot API client (for the `telegram.send`/`telegram.edit` tools); null while stopped. */
  get api(): Bot["api"] | null {
    return this.#bot?.api ?? null;
  }

  /**
   * Checks the configuration, connects (getMe) and starts long polling; resolves once
   * polling runs. Polling stops when `signal` aborts.
   *
   * @throws BubError(config) when the token is missing, no allowlist is set (closed by default), the proxy is invalid or Telegram refuses the token.
   */
  async start(signal: AbortSignal): Promise<void> {
    const settings = await this.#framework.settings.load(telegramSettings);
    if (!settings.token.trim()) throw new BubError("config", "BUB_TELEGRAM_TOKEN is not set: create a bot with @BotFather and set its token.");
    this.#users = parseAllowlist(settings.allow_users);
    this.#chats = parseAllowlist(settings.allow_chats);
    if (this.#users.size === 0 && this.#chats.size === 0 && !settings.allow_all) throw new BubError("config", CLOSED_BY_DEFAULT);
    this.#settings = settings;
    const [{ Bot, GrammyError }, client] = await Promise.all([import("grammy"), import("./client.ts")]);
    const connection = client.connect(settings.proxy.trim());
    this.#connection = connection;
    this.#describeError = client.describeTelegramError;
    const apiRoot = settings.api_root.replace(/\/+$/, "");
    // grammY types `fetch` as node-fetch's; undici's fetch is what runs.
    const bot = new Bot(settings.token.trim(), { client: { apiRoot, fetch: connection.fetch as unknown as ApiClientOptions["fetch"] } });
    client.installRetries(bot.api, this.#options.retry);
    bot.command("start", (ctx) => this.#onStart(ctx));
    bot.command("bub", (ctx) => (ctx.match.trim() ? this.#onMessage(ctx, ctx.match.trim()) : undefined));
    bot.on("message", (ctx) => this.#onMessage(ctx));
    bot.catch((error) => log.error(`telegram.update failed chat_id=${String(error.ctx.chat?.id ?? "?")}: ${client.describeTelegramError(error.error)}`));
    try {
      // grammY retries getMe until it succeeds or the signal aborts: give up with the per-call deadline.
      const connecting = AbortSignal.any([signal, AbortSignal.timeout((this.#options.retry?.deadlineSeconds ?? 120) * 1000)]);
      await bot.init(connecting as unknown as Parameters<Bot["init"]>[0]);
    } catch (error) {
      await this.#closeConnection();
      const detail = client.describeTelegramError(error);
      if (error instanceof GrammyError) {
        throw new BubError("config", `Telegram did not accept the bot (${detail}): check BUB_TELEGRAM_TOKEN and BUB_TELEGRAM_API_ROOT.`, { cause: error });
      }
      throw new BubError("config", `Could not reach the Telegram Bot API at ${apiRoot} via ${connection.route} (${detail}): check BUB_TELEGRAM_API_ROOT and the proxy (BUB_TELEGRAM_PROXY, HTTPS_PROXY).`, { cause: error });
    }
    this.#bot = bot;
    this.#botInfo = bot.botInfo;
    const started = Promise.withResolvers<void>();
    this.#polling = bot
      .start({ drop_pending_updates: true, allowed_updates: ["message"], onStart: () => started.resolve() })
      .catch((error: unknown) => {
        started.reject(error);
        log.error("telegram.polling stopped", error);
      });
    await started.promise;
    signal.addEventListener("abort", () => void this.#stopPolling(), { once: true });
    if (signal.aborted) await this.#stopPolling();
    log.info(`telegram.start polling as @${bot.botInfo.username} (api ${apiRoot}, ${connection.route})`);
  }

  async #stopPolling(): Promise<void> {
    const bot = this.#bot;
    if (!bot?.isRunning()) return;
    try {
      await bot.stop();
    } catch (error) {
      log.debug("telegram.stop failed", error);
    }
  }

  /** Stops polling and every typing indicator. Replies can no longer be sent. */
  async stop(): Promise<void> {
    await this.#stopPolling();
    await this.#polling;
    for (const loop of this.#typing.values()) clearInterval(loop.timer);
    this.#typing.clear();
    this.#bot = null;
    await this.#closeConnection();
  }

  async #closeConnection(): Promise<void> {
    const connection = this.#connection;
    this.#connection = null;
    try {
      await connection?.close();
    } catch (error) {
      log.debug("telegram.connection close failed", error);
    }
  }

  /**
   * Sends an outbound message to its chat, split at Telegram's length limit; one that would
   * take more than `max_messages` messages goes out as a preview and `answer.md` instead. A
   * message that cannot be delivered after the retries is logged with its session (the turn
   * and its tape are unaffected).
   */
  async send(message: Envelope): Promise<void> {
    const sessionId = String(fieldOf(message, "session_id") ?? "?");
    const chatId = String(fieldOf(message, "chat_id") ?? "");
    const text = outboundText(message);
    if (!text.trim()) return;
    const bot = this.#bot;
    if (!bot) {
      log.error(`telegram.send undeliverable session_id=${sessionId} chat_id=${chatId}: the channel is not running`);
      return;
    }
    const parts = splitMessage(text);
    const maxMessages = this.#settings?.max_messages ?? DEFAULT_MAX_MESSAGES;
    if (parts.length > maxMessages) {
      await this.#sendAsFile(bot, { sessionId, chatId, text, parts: parts.length });
      return;
    }
    for (const [index, part] of parts.entries()) {
      try {
        await bot.api.sendMessage(chatId, part);
      } catch (error) {
        log.error(`telegram.send undeliverable session_id=${sessionId} chat_id=${chatId} part=${index + 1}/${parts.length}: ${this.#describeError(error)}`);
        return;
      }
    }
  }

  /**
   * Sends a reply too long for `max_messages` messages as a short preview message and the
   * whole text as `answer.md`. Each of the two is tried even when the other fails.
   */
  async #sendAsFile(bot: Bot, reply: { sessionId: string; chatId: string; text: string; parts: number }): Promise<void> {
    const { sessionId, chatId, text, parts } = reply;
    const where = `session_id=${sessionId} chat_id=${chatId}`;
    log.info(`telegram.send long reply ${where} chars=${text.length} parts=${parts}: sent as a preview and ${ANSWER_FILE}`);
    const preview = `${previewOf(text, PREVIEW_CHARS)}\n\n… The full answer (${text.length.toLocaleString("en-US")} characters) is attached as ${ANSWER_FILE}.`;
    try {
      await bot.api.sendMessage(chatId, preview);
    } catch (error) {
      log.error(`telegram.send undeliverable ${where} part=preview: ${this.#describeError(error)}`);
    }
    try {
      const { InputFile } = await import("grammy");
      await bot.api.sendDocument(chatId, new InputFile(Buffer.from(text, "utf8"), ANSWER_FILE));
    } catch (error) {
      log.error(`telegram.send undeliverable ${where} part=${ANSWER_FILE}: ${this.#describeError(error)}`);
    }
  }

  // ---- receiving ----------------------------------------------------------------------

  /** Why a message may not be served: null when it may. */
  #refusal(message: Message): "chat" | "user" | null {
    if (this.#chats.size > 0 && !this.#chats.has(String(message.chat.id))) return "chat";
    const user = message.from;
    if (this.#users.size > 0 && !(user && (this.#users.has(String(user.id)) || (user.username && this.#users.has(user.username.toLowerCase()))))) return "user";
    return null;
  }

  /**
   * Turns away a message the allowlists do not admit: one short refusal in a private chat;
   * silence in a group, where a refusal would speak to everyone (logged at info when the
   * message addressed the bot).
   */
  async #turnAway(ctx: Context, message: Message, refusal: "chat" | "user", answer: string, addressed: boolean): Promise<void> {
    const who = `user_id=${message.from?.id ?? "?"} chat_id=${message.chat.id}`;
    if (message.chat.type === "private") {
      log.info(`telegram.denied ${who} (not in the ${refusal} allowlist): refused`);
      await ctx.reply(answer);
      return;
    }
    if (addressed) log.info(`telegram.denied ${who} chat_type=${message.chat.type} (not in the ${refusal} allowlist): ignored`);
    else log.debug(`telegram.denied ${who} chat_type=${message.chat.type}: ignored`);
  }

  async #onStart(ctx: Context): Promise<void> {
    const message = ctx.message;
    if (!message) return;
    const refusal = this.#refusal(message);
    if (refusal) return this.#turnAway(ctx, message, refusal, NOT_ALLOWED, true);
    await ctx.reply("Bub is online. Send text to start.");
  }

  async #onMessage(ctx: Context, commandText?: string): Promise<void> {
    const message = ctx.message;
    if (!message?.from) return;
    if (commandText === undefined && message.entities?.some((entity) => entity.type === "bot_command" && entity.offset === 0)) return;
    const refusal = this.#refusal(message);
    if (refusal === "chat") return;
    if (refusal === "user") {
      const addressed = commandText !== undefined || (this.#botInfo ? isAddressed(message, this.#botInfo) : false);
      return this.#turnAway(ctx, message, refusal, ACCESS_DENIED, addressed);
    }
    await this.#options.messageHandler(this.#toChannelMessage(message, commandText));
  }

  #toChannelMessage(message: Message, commandText?: string): ChannelMessage {
    const chatId = String(message.chat.id);
    const sessionId = `telegram:${chatId}`;
    const content = commandText ?? messageContent(message);
    if (content.trim().startsWith(",")) {
      return new ChannelMessage({ sessionId, channel: "telegram", chatId, content: content.trim(), outputChannel: "telegram" });
    }
    const metadata = messageMetadata(message);
    const media: MediaItem[] = [];
    const own = this.#mediaItem(message);
    if (own) media.push(own);
    const reply = message.reply_to_message as Message | undefined;
    if (reply?.from) {
      metadata.reply_to_message = { message: messageContent(reply), ...messageMetadata(reply) };
      const replied = this.#mediaItem(reply);
      if (replied) media.push(replied);
    }
    return new ChannelMessage({
      sessionId,
      channel: "telegram",
      chatId,
      content: JSON.stringify({ message: content, ...metadata }),
      isActive: this.#botInfo ? isAddressed(message, this.#botInfo) : message.chat.type === "private",
      media,
      lifespan: this.#typingLifespan(chatId),
      outputChannel: "telegram",
    });
  }

  #mediaItem(message: Message): MediaItem | null {
    const media = messageMedia(message);
    if (!media) return null;
    const limit = this.#settings?.max_file_bytes ?? 2 * 1024 * 1024;
    const bot = this.#bot;
    const token = this.#settings?.token.trim() ?? "";
    const apiRoot = (this.#settings?.api_root ?? "https://api.telegram.org").replace(/\/+$/, "");
    const fetch = this.#connection?.fetch;
    return {
      ...mediaKind(message, media),
      filename: media.file_name,
      dataFetcher: async () => {
        if (!bot || !fetch || (media.file_size !== undefined && media.file_size > limit)) return null;
        const file = await bot.api.getFile(media.file_id);
        if (!file.file_path || (file.file_size !== undefined && file.file_size > limit)) return null;
        return downloadFile(`${apiRoot}/file/bot${token}/${file.file_path}`, { fetch, maxBytes: limit });
      },
    };
  }

  // ---- typing indicator ---------------------------------------------------------------

  #typingLifespan(chatId: string): NonNullable<ChannelMessage["lifespan"]> {
    return { enter: () => this.#startTyping(chatId), exit: () => this.#stopTyping(chatId) };
  }

  #startTyping(chatId: string): void {
    const loop = this.#typing.get(chatId);
    if (loop) {
      loop.users++;
      return;
    }
    const send = () => {
      this.#bot?.api.sendChatAction(chatId, "typing").catch((error: unknown) => {
        log.warn(`telegram.typing stopped chat_id=${chatId}: ${this.#describeError(error)}`);
        const current = this.#typing.get(chatId);
        if (current) clearInterval(current.timer);
        this.#typing.delete(chatId);
      });
    };
    this.#typing.set(chatId, { users: 1, timer: setInterval(send, TYPING_EVERY_MS) });
    send();
  }

  #stopTyping(chatId: string): void {
    const loop = this.#typing.get(chatId);
    if (!loop) return;
    if (--loop.users > 0) return;
    clearInterval(loop.timer);
    this.#typing.delete(chatId);
  }
}

/** The Telegram channel for the builtin plugin's `provideChannels`. */
export function createTelegramChannel(framework: TelegramFramework, options: TelegramChannelOptions): TelegramChannel {
  return new TelegramChannel(framework, options);
}
