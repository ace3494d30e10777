/**
 * The `telegram` channel: a grammY bot on long polling. grammY and undici are imported
 * only when the channel starts, so `bub --help` never loads them.
 */
import type { ApiClientOptions, Bot, Context } from "grammy";
import type { Message, Update, User } from "grammy/types";
import { join } from "node:path";
import { createLogger } from "../../kernel/log.ts";
import { BubError, describeError } from "../../kernel/errors.ts";
import { contentOf, fieldOf, type Envelope } from "../../kernel/envelope.ts";
import type { BubFramework } from "../../kernel/framework.ts";
import type { Channel, MessageHandler } from "../../kernel/types.ts";
import type { InboundJournal } from "../inbound-journal.ts";
import { ChannelMessage, type MediaItem } from "../message.ts";
import { turnScope } from "../session-turns.ts";
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
/** Long polling: how long one getUpdates call waits for updates, and the pause after a failed one. */
const POLL_TIMEOUT_SECONDS = 30;
const POLL_RETRY_MS = 3000;
/** Sent for a message whose turn a restart cut off twice (it is not run a third time). */
export const GIVEN_UP = "Bub restarted twice while working on your message, so it was not answered. Please send it again.";

/** Options for {@link TelegramChannel}. */
export interface TelegramChannelOptions {
  /** Where received messages go (the channel manager's handler). */
  messageHandler: MessageHandler;
  /** How Bot API calls are retried (bounds for @grammyjs/auto-retry). */
  retry?: TelegramRetryOptions;
}

/** The parts of the framework the channel uses (`home` holds the inbound journal). */
export type TelegramFramework = Pick<BubFramework, "settings" | "home">;

/** The update being handed to the bot's handlers (updates are handled one at a time). */
interface Handing {
  id: number;
  /** Its message went to the manager (a turn will mark it done). */
  handed: boolean;
  /** It is run again after a restart cut its turn off. */
  retried: boolean;
}

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
  #pollStop: AbortController | null = null;
  #journal: InboundJournal | null = null;
  #handing: Handing | null = null;
  /** Per chat, the journaled updates handed to the manager whose turn has not started. */
  readonly #unclaimed = new Map<string, Set<number>>();
  /** The journaled update ids of a turn, by its inbound message's lifespan. */
  readonly #turnIds = new WeakMap<object, () => number[]>();
  /** Replies of journaled turns go out one at a time, each recorded before the next leaves. */
  #replying: Promise<void> = Promise.resolve();
  readonly #typing = new Map<string, TypingLoop>();

  constructor(framework: TelegramFramework, options: TelegramChannelOptions) {
    this.#framework = framework;
    this.#options = { ...options, messageHandler: (message) => this.#handOver(message, options.messageHandler) };
    // Every reply passes through #sendRecorded, which records its turn's updates as done.
    const deliver = this.send.bind(this);
    this.send = (message) => this.#sendRecorded(message, deliver);
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
    const journalPath = join(this.#framework.home, "inbound", `telegram-${bot.botInfo.id}.jsonl`);
    let journal: InboundJournal;
    try {
      const { InboundJournal } = await import("../inbound-journal.ts");
      journal = await InboundJournal.open(journalPath);
    } catch (error) {
      await this.#closeConnection();
      throw new BubError("config", `Cannot open the inbound journal ${journalPath} (${describeError(error)}): check that BUB_HOME is writable.`, { cause: error });
    }
    this.#journal = journal;
    this.#bot = bot;
    this.#botInfo = bot.botInfo;
    try {
      // Polling needs no webhook; what Telegram still holds for the bot is kept (not dropped).
      await bot.api.deleteWebhook({ drop_pending_updates: false }, signal as unknown as Parameters<Bot["api"]["deleteWebhook"]>[1]);
    } catch (error) {
      if (!signal.aborted) {
        await this.stop();
        throw error;
      }
    }
    // First what the journal holds from before the restart, then what Telegram holds.
    await this.#replayJournal(bot, journal);
    const pollStop = new AbortController();
    this.#pollStop = pollStop;
    this.#polling = this.#poll(bot, journal, pollStop.signal);
    signal.addEventListener("abort", () => void this.#stopPolling(), { once: true });
    if (signal.aborted) await this.#stopPolling();
    log.info(`telegram.start polling as @${bot.botInfo.username} (api ${apiRoot}, ${connection.route})`);
    log.debug(`telegram.journal ${journalPath}`);
  }

  /**
   * Runs again what the journal holds: updates received but not done. One whose turn had
   * started was cut off by the restart: it is retried once, its message's context saying
   * `retried_after_restart: true`. One whose retry was cut off too is given up: its chat
   * is told to send it again (a message that brings the gateway down is not run for ever).
   */
  async #replayJournal(bot: Bot, journal: InboundJournal): Promise<void> {
    const pending = journal.pending();
    if (pending.length === 0) return;
    log.info(`telegram.journal resuming ${pending.length} update(s) received before the restart`);
    for (const entry of pending) {
      if (entry.starts >= 2) {
        const chatId = (entry.item as Update).message?.chat.id;
        log.warn(`telegram.journal update_id=${entry.id} chat_id=${String(chatId ?? "?")} was cut off by a restart twice; not run again`);
        if (chatId !== undefined) await bot.api.sendMessage(chatId, GIVEN_UP).catch((error: unknown) => log.error(`telegram.send undeliverable chat_id=${chatId}: ${this.#describeError(error)}`));
        await journal.done([entry.id]);
        continue;
      }
      if (entry.started) {
        log.warn(`telegram.journal update_id=${entry.id} was cut off by a restart; running it again once`);
        await journal.retried([entry.id]);
      }
      await this.#handleUpdate(bot, journal, entry.item as Update, entry.started);
    }
  }

  /**
   * Long polling that acknowledges an update (the next getUpdates' offset) only once the
   * journal holds it on disk. Updates the journal already has are not run again.
   */
  async #poll(bot: Bot, journal: InboundJournal, signal: AbortSignal): Promise<void> {
    let offset = journal.lastId > 0 ? journal.lastId + 1 : undefined;
    const apiSignal = signal as unknown as Parameters<Bot["api"]["getUpdates"]>[1];
    while (!signal.aborted) {
      let fresh: number[];
      let updates: Update[];
      try {
        updates = await bot.api.getUpdates({ offset, timeout: POLL_TIMEOUT_SECONDS, allowed_updates: ["message"] }, apiSignal);
        if (updates.length === 0) continue;
        fresh = await journal.receive(updates.map((update) => ({ id: update.update_id, item: update })));
      } catch (error) {
        if (signal.aborted) break;
        log.warn(`telegram.polling getUpdates failed, trying again in ${POLL_RETRY_MS / 1000}s: ${this.#describeError(error)}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, POLL_RETRY_MS);
          signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
        });
        continue;
      }
      offset = Math.max(offset ?? 0, ...updates.map((update) => update.update_id + 1));
      const recorded = new Set(fresh);
      for (const update of updates) {
        if (recorded.has(update.update_id)) await this.#handleUpdate(bot, journal, update, false);
      }
    }
  }

  /** Hands one journaled update to the bot's handlers; one that did not reach a turn is done at once. */
  async #handleUpdate(bot: Bot, journal: InboundJournal, update: Update, retried: boolean): Promise<void> {
    const handing: Handing = { id: update.update_id, handed: false, retried };
    this.#handing = handing;
    try {
      await bot.handleUpdate(update);
    } catch (error) {
      const chatId = update.message?.chat.id ?? "?";
      log.error(`telegram.update failed chat_id=${String(chatId)}: ${this.#describeError((error as { error?: unknown }).error ?? error)}`);
    } finally {
      this.#handing = null;
    }
    if (!handing.handed) await this.#journalDone([handing.id]);
  }

  /**
   * The manager's handler, wrapped: a journaled message's turn marks its update (and the
   * earlier ones of its chat that no turn has claimed, such as the rest of a debounced
   * batch) started when it begins and done once its replies were sent. Chatter the bot
   * was not addressed in is done once handed over (it is context at most).
   */
  #handOver(message: Envelope, handler: MessageHandler): Promise<void> {
    const handing = this.#handing;
    const journal = this.#journal;
    if (!handing || !journal || !(message instanceof ChannelMessage)) return handler(message);
    handing.handed = true;
    const { id } = handing;
    if (handing.retried) message.context.retried_after_restart = true;
    if (!message.isActive && !message.content.trimStart().startsWith(",")) {
      return handler(message).finally(() => this.#journalDone([id]));
    }
    const chatId = message.chatId;
    let unclaimed = this.#unclaimed.get(chatId);
    if (!unclaimed) this.#unclaimed.set(chatId, (unclaimed = new Set()));
    unclaimed.add(id);
    const inner = message.lifespan;
    let claimed: number[] | null = null;
    const claim = (): number[] => {
      if (claimed) return claimed;
      const open = this.#unclaimed.get(chatId);
      claimed = open ? [...open].filter((other) => other <= id) : [id];
      for (const other of claimed) open?.delete(other);
      if (open?.size === 0) this.#unclaimed.delete(chatId);
      return claimed;
    };
    const lifespan: NonNullable<ChannelMessage["lifespan"]> = {
      enter: () => {
        journal.started(claim()).catch((error: unknown) => log.error("telegram.journal could not record a started turn", error));
        return inner?.enter();
      },
      exit: (error) => inner?.exit(error),
      settled: (outcome) => {
        // A turn the shutdown cancelled stays open: it is retried once after the restart.
        if (outcome === "done") void this.#journalDone(claim());
      },
    };
    this.#turnIds.set(lifespan, claim);
    message.lifespan = lifespan;
    return handler(message);
  }

  /**
   * Sends a reply of a journaled turn and records the turn's updates as done right after
   * it left, one reply at a time: a kill -9 can then cut at most one reply between leaving
   * and being recorded (that one is sent again after the restart). Other sends go straight out.
   */
  async #sendRecorded(message: Envelope, deliver: (message: Envelope) => Promise<void>): Promise<void> {
    const inbound = turnScope.getStore()?.message;
    const lifespan = inbound === undefined ? undefined : fieldOf(inbound, "lifespan");
    const claim = typeof lifespan === "object" && lifespan !== null ? this.#turnIds.get(lifespan) : undefined;
    const journal = this.#journal;
    if (!claim || !journal) return deliver(message);
    const previous = this.#replying;
    const turn = Promise.withResolvers<void>();
    this.#replying = turn.promise;
    try {
      await previous;
      await deliver(message);
      await this.#journalDone(claim());
    } finally {
      turn.resolve();
    }
  }

  async #journalDone(ids: number[]): Promise<void> {
    try {
      await this.#journal?.done(ids);
    } catch (error) {
      log.error(`telegram.journal could not record update(s) ${ids.join(",")} as done`, error);
    }
  }

  async #stopPolling(): Promise<void> {
    this.#pollStop?.abort();
  }

  /** Stops polling and every typing indicator. Replies can no longer be sent. */
  async stop(): Promise<void> {
    await this.#stopPolling();
    await this.#polling;
    for (const loop of this.#typing.values()) clearInterval(loop.timer);
    this.#typing.clear();
    this.#bot = null;
    await this.#closeConnection();
    const journal = this.#journal;
    this.#journal = null;
    try {
      await journal?.close();
    } catch (error) {
      log.error("telegram.journal close failed", error);
    }
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
