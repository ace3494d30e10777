/**
 * The `telegram` channel: a grammY bot on long polling. grammY and undici are imported
 * only when the channel starts, so `bub --help` never loads them. This class wires the
 * parts: the durable intake of updates (./polling.ts), receiving (./inbound.ts), sending
 * (./outbound.ts) and the typing indicator (./typing.ts).
 */
import type { Bot } from "grammy";
import type { User } from "grammy/types";
import { join } from "node:path";
import { createLogger } from "../../kernel/log.ts";
import { BubError, describeError } from "../../kernel/errors.ts";
import type { Envelope } from "../../kernel/envelope.ts";
import type { TurnContext } from "../../kernel/turn-context.ts";
import type { BubFramework } from "../../kernel/framework.ts";
import { sessionTapeNamer } from "../../tape/tapes.ts";
import type { Channel, MessageHandler } from "../../kernel/types.ts";
import type { ApprovalAnswer, ApprovalRequest } from "../../kernel/approval.ts";
import type { InboundJournal } from "../inbound-journal.ts";
import { clusterDatabaseUrl } from "../cluster/settings.ts";
import { sharedQueueRefusal } from "../admission.ts";
import type { TelegramConnection, TelegramRetryOptions } from "./client.ts";
import { TelegramApprovals } from "./approval.ts";
import { onMessage, onStart, type InboundContext } from "./inbound.ts";
import { outboundText } from "./outbound.ts";
import type { DeliveryLedger } from "../delivery/ledger.ts";
import type { PollerElection } from "./poller-lock.ts";
import { apiSignal } from "./narrow.ts";
import { DurableUpdates, type Notify, type OutboundOrigin } from "./polling.ts";
import { toolSendOptions } from "./send-options.ts";
import type { LedgerSend } from "./tools.ts";
import type { QueuedUpdates } from "./queued.ts";
import type { WebhookServer } from "./webhook.ts";
import { hasTelegramToken, parseAllowlist, telegramSettings, type TelegramSettings } from "./settings.ts";
import { TypingIndicator } from "./typing.ts";

export { ANSWER_FILE } from "./outbound.ts";
export { GIVEN_UP } from "./polling.ts";

const log = createLogger("bub:telegram");

/** Shown when the bot would otherwise answer anyone (the agent has a shell). */
export const CLOSED_BY_DEFAULT =
  "Telegram is closed by default: the agent can run shell commands, so say who may talk to the bot. " +
  "Set BUB_TELEGRAM_ALLOW_USERS (comma-separated user ids or usernames) or BUB_TELEGRAM_ALLOW_CHATS (comma-separated chat ids), " +
  "or set BUB_TELEGRAM_ALLOW_ALL=true to serve everyone.";

/** Options for {@link TelegramChannel}. */
export interface TelegramChannelOptions {
  /** Where received messages go (the channel manager's handler). */
  messageHandler: MessageHandler;
  /** How Bot API calls are retried (bounds for @grammyjs/auto-retry). */
  retry?: TelegramRetryOptions;
}

/** The parts of the framework the channel uses (`home` holds the inbound journal). */
export type TelegramFramework = Pick<BubFramework, "settings" | "home" | "workspace" | "admitMessage" | "steeringInbox">;

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
  #webhook: WebhookServer | null = null;
  #queued: QueuedUpdates | null = null;
  #ledger: DeliveryLedger | null = null;
  #describeError: (error: unknown) => string = describeError;
  #users = new Set<string>();
  #chats = new Set<string>();
  readonly #durable = new DurableUpdates((error) => this.#describeError(error));
  readonly #typing = new TypingIndicator(
    () => this.#bot?.api ?? null,
    (error) => this.#describeError(error),
  );
  readonly #inbound: InboundContext;
  readonly #approvals = new TelegramApprovals({
    api: () => this.#bot?.api ?? null,
    users: () => this.#users,
    describeError: (error) => this.#describeError(error),
  });

  constructor(framework: TelegramFramework, options: TelegramChannelOptions) {
    this.#framework = framework;
    this.#options = options;
    const channel = this;
    this.#inbound = {
      get bot() {
        return channel.#bot;
      },
      get botInfo() {
        return channel.#botInfo;
      },
      get settings() {
        return channel.#settings;
      },
      get fetch() {
        return channel.#connection?.fetch;
      },
      get users() {
        return channel.#users;
      },
      get chats() {
        return channel.#chats;
      },
      messageHandler: (message, update) => channel.#durable.handOver(message, options.messageHandler, update),
      typingLifespan: (chatId) => channel.#typing.lifespan(chatId),
    };
  }

  /**
   * Sends an outbound. Every reply passes through `sendRecorded`, which records the updates
   * of its turn (`context.message`, the message the turn answers) as done.
   */
  send(message: Envelope, context?: TurnContext): Promise<void> {
    return this.#durable.sendRecorded(message, (outbound, origin) => this.#deliver(outbound, origin), context?.message ?? null);
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
   * Checks the configuration, connects (getMe), runs again what the journal holds, and
   * starts taking updates: long polling, or with `BUB_TELEGRAM_WEBHOOK_URL` a webhook
   * (./webhook.ts). Resolves once updates are taken; that stops when `signal` aborts.
   *
   * @throws BubError(config) when the token is missing, no allowlist is set (closed by default), the proxy is invalid, Telegram refuses the token or the webhook, or the webhook's address cannot be listened on.
   */
  async start(signal: AbortSignal): Promise<void> {
    const settings = await this.#framework.settings.load(telegramSettings);
    if (!settings.token.trim()) throw new BubError("config", "BUB_TELEGRAM_TOKEN is not set: create a bot with @BotFather and set its token.");
    this.#users = parseAllowlist(settings.allow_users);
    this.#chats = parseAllowlist(settings.allow_chats);
    if (this.#users.size === 0 && this.#chats.size === 0 && !settings.allow_all) throw new BubError("config", CLOSED_BY_DEFAULT);
    // With tapes in PostgreSQL several gateways may serve this bot: only the elected one polls
    // (a webhook needs no election: any process may take a request).
    const webhook = settings.webhook_url.trim() !== "";
    const storeKind = String(this.#framework.settings.getValue("tape_store", "file")).trim().toLowerCase();
    const databaseUrl = clusterDatabaseUrl(this.#framework.settings);
    let election: PollerElection | undefined;
    // With BUB_DATABASE_URL the gateways share one inbound queue (./queued.ts) instead of each its journal.
    const shared = databaseUrl !== "";
    const refusal = shared ? sharedQueueRefusal(this.#framework) : null;
    if (refusal) throw new BubError("config", refusal);
    if ((storeKind === "postgres" || shared) && !webhook) {
      const { postgresPollerElection } = await import("./poller-lock.ts");
      // The token starts with the bot's id.
      const botId = settings.token.trim().replace(/:.*$/s, "");
      election = postgresPollerElection({ url: databaseUrl, botId, retrySeconds: settings.poller_retry_seconds });
    }
    this.#settings = settings;
    const [{ Bot, GrammyError }, client] = await Promise.all([import("grammy"), import("./client.ts")]);
    const connection = client.connect(settings.proxy.trim());
    this.#connection = connection;
    this.#describeError = client.describeTelegramError;
    const apiRoot = settings.api_root.replace(/\/+$/, "");
    // Bot API calls go through undici's fetch (the proxy-aware connection), not grammY's node-fetch.
    const bot = new Bot(settings.token.trim(), { client: { apiRoot, fetch: connection.fetch } });
    client.installRetries(bot.api, this.#options.retry);
    bot.command("start", (ctx) => onStart(this.#inbound, ctx));
    bot.command("bub", (ctx) => (ctx.match.trim() ? onMessage(this.#inbound, ctx, ctx.match.trim()) : undefined));
    // `/link CODE` is `,link CODE` (identity links, src/channels/links/tool.ts).
    bot.command("link", (ctx) => onMessage(this.#inbound, ctx, `,link ${ctx.match.trim()}`.trim()));
    bot.on("message", (ctx) => onMessage(this.#inbound, ctx));
    bot.on("callback_query:data", (ctx) => this.#approvals.onCallbackQuery(ctx));
    bot.catch((error) => log.error(`telegram.update failed chat_id=${String(error.ctx.chat?.id ?? "?")}: ${client.describeTelegramError(error.error)}`));
    try {
      // grammY retries getMe until it succeeds or the signal aborts: give up with the per-call deadline.
      const connecting = AbortSignal.any([signal, AbortSignal.timeout((this.#options.retry?.deadlineSeconds ?? 120) * 1000)]);
      await bot.init(apiSignal(connecting));
    } catch (error) {
      await this.#closeConnection();
      const detail = client.describeTelegramError(error);
      if (error instanceof GrammyError) {
        throw new BubError("config", `Telegram did not accept the bot (${detail}): check BUB_TELEGRAM_TOKEN and BUB_TELEGRAM_API_ROOT.`, { cause: error });
      }
      throw new BubError("config", `Could not reach the Telegram Bot API at ${apiRoot} via ${connection.route} (${detail}): check BUB_TELEGRAM_API_ROOT and the proxy (BUB_TELEGRAM_PROXY, HTTPS_PROXY).`, { cause: error });
    }
    try {
      this.#ledger = await this.#openLedger(bot.botInfo.id, settings, apiRoot, connection);
    } catch (error) {
      await this.#closeConnection();
      throw error;
    }
    const journalPath = join(this.#framework.home, "inbound", `telegram-${bot.botInfo.id}.jsonl`);
    let concurrency = 0;
    if (shared) {
      try {
        const { openQueuedUpdates } = await import("./queued.ts");
        const opened = await openQueuedUpdates({
          url: databaseUrl,
          botId: String(bot.botInfo.id),
          settings: this.#framework.settings,
          framework: this.#framework,
          // Tapes in the queue's database: each message names its session's tape, so the queue can say where it ends.
          tapeOf: storeKind === "postgres" ? sessionTapeNamer(this.#framework.workspace) : undefined,
          asks: (data) => this.#approvals.asks(data),
          notify: this.#notify,
          describeError: this.#describeError,
        });
        this.#queued = opened.queued;
        concurrency = opened.concurrency;
      } catch (error) {
        await this.#closeLedger();
        await this.#closeConnection();
        throw error;
      }
      this.#durable.attachQueue(this.#queued);
    } else {
      let journal: InboundJournal;
      try {
        const { InboundJournal } = await import("../inbound-journal.ts");
        journal = await InboundJournal.open(journalPath);
      } catch (error) {
        await this.#closeLedger();
        await this.#closeConnection();
        throw new BubError("config", `Cannot open the inbound journal ${journalPath} (${describeError(error)}): check that BUB_HOME is writable.`, { cause: error });
      }
      this.#durable.attach(journal);
    }
    this.#bot = bot;
    this.#botInfo = bot.botInfo;
    try {
      const queued = this.#queued;
      if (queued) {
        await queued.start(bot, concurrency);
        // A shutdown takes no new jobs; the turns running finish (or are run again elsewhere).
        signal.addEventListener("abort", () => void queued.stopWorking(), { once: true });
      }
      if (webhook) {
        await this.#durable.resume(bot, this.#ledger?.answeredInbound() ?? new Set(), this.#notify);
        const { serveWebhook } = await import("./webhook.ts");
        const server = await serveWebhook(bot, settings, (update) => this.#durable.accept(bot, [update]), signal, this.#describeError);
        this.#webhook = server;
        signal.addEventListener("abort", () => void server.close(), { once: true });
        if (signal.aborted) await server.close();
        log.info(`telegram.start serving the webhook ${settings.webhook_url.trim()} on ${settings.webhook_listen.trim()} (port ${server.port}) as @${bot.botInfo.username} (api ${apiRoot}, ${connection.route})`);
      } else {
        // Polling needs no webhook; what Telegram still holds for the bot is kept (not dropped).
        await bot.api.deleteWebhook({ drop_pending_updates: false }, apiSignal(signal));
        await this.#durable.resume(bot, this.#ledger?.answeredInbound() ?? new Set(), this.#notify);
        this.#durable.startPolling(bot, signal, election);
        log.info(`telegram.start ${election ? "serving (polling once elected)" : "polling"} as @${bot.botInfo.username} (api ${apiRoot}, ${connection.route})`);
      }
    } catch (error) {
      if (!signal.aborted) {
        await this.stop();
        throw error;
      }
    }
    if (!shared) log.debug(`telegram.journal ${journalPath}`);
  }

  /**
   * Stops taking updates (polling, or the webhook server once the requests under way were
   * answered; the webhook stays registered with Telegram) and every typing indicator.
   * Replies can no longer be sent.
   */
  async stop(): Promise<void> {
    const webhook = this.#webhook;
    this.#webhook = null;
    await webhook?.close();
    await this.#durable.stop();
    const queued = this.#queued;
    this.#queued = null;
    await queued?.close();
    this.#typing.stopAll();
    // What is ready to send goes out first; what waits to be retried stays in the ledger.
    await this.#closeLedger();
    this.#bot = null;
    await this.#closeConnection();
    await this.#durable.closeJournal();
  }

  /**
   * The delivery ledger replies go through (../delivery/): its store, and a Bot API client of
   * its own on the same connection, without auto-retry (the ledger retries).
   * @throws BubError(config) when the ledger cannot be opened.
   */
  async #openLedger(botId: number, settings: TelegramSettings, apiRoot: string, connection: TelegramConnection): Promise<DeliveryLedger> {
    const [{ Api }, client, delivery, { DeliveryLedger }, { telegramSender }] = await Promise.all([
      import("grammy"),
      import("./client.ts"),
      import("../delivery/settings.ts"),
      import("../delivery/ledger.ts"),
      import("./delivery.ts"),
    ]);
    const deliverySettings = await this.#framework.settings.load(delivery.deliverySettings);
    const policy = delivery.retryPolicyOf(deliverySettings);
    // A call that hangs holds up its chat and one of the ledger's send slots: it is cut off
    // after the per-call deadline and counts as unknown (the request may have arrived).
    const api = new Api(settings.token.trim(), { apiRoot, fetch: connection.fetch, timeoutSeconds: this.#options.retry?.deadlineSeconds ?? 120 });
    client.installFailureLogging(api);
    let opened: Awaited<ReturnType<typeof delivery.openDeliveryStore>>;
    try {
      opened = await delivery.openDeliveryStore(this.#framework.settings, this.#framework.home);
    } catch (error) {
      if (BubError.isInstance(error)) throw error;
      throw new BubError("config", `Cannot open the delivery ledger (${describeError(error)}): check BUB_DATABASE_URL, or that BUB_HOME is writable.`, { cause: error });
    }
    const ledger = new DeliveryLedger({ ...opened, source: `telegram-${botId}`, sender: telegramSender(api, () => settings.max_messages), policy, concurrency: deliverySettings.concurrency });
    try {
      await ledger.start();
    } catch (error) {
      await opened.store.close().catch(() => undefined);
      throw new BubError("config", `Cannot read the delivery ledger ${opened.store.where} (${describeError(error)}).`, { cause: error });
    }
    log.debug(`telegram.delivery ledger ${ledger.where}`);
    return ledger;
  }

  /** Sends what is ready (for at most 5 s), then closes the ledger. */
  async #closeLedger(): Promise<void> {
    const ledger = this.#ledger;
    this.#ledger = null;
    if (!ledger) return;
    try {
      await ledger.drain(5000);
      await ledger.close();
    } catch (error) {
      log.error("telegram.delivery close failed", error);
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

  /** Asks in the turn's chat, with Approve / Deny buttons, whether a tool call may run (see ./approval.ts). */
  askApproval(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    return this.#approvals.ask(request, signal);
  }

  /**
   * Records an outbound message in the delivery ledger, which sends it to its chat (split
   * at Telegram's length limit, or as a preview and `answer.md` beyond `max_messages`
   * messages; see ../delivery/ledger.ts for retries and dead letters). Resolves once it is
   * recorded; `origin` names the updates whose turn it answers, or its key (a queued turn's reply).
   */
  async #deliver(message: Envelope, origin: OutboundOrigin = {}): Promise<void> {
    const text = outboundText(message);
    if (!text.trim()) return;
    await this.#record(message.chatId, message.sessionId ?? "?", text, origin);
  }

  /** `telegram.send` through the delivery ledger while the channel runs (null otherwise); see ./tools.ts. */
  get ledgerSend(): LedgerSend | null {
    const ledger = this.#ledger;
    if (!ledger) return null;
    return ({ chatId, sessionId, text, options }, signal) => ledger.deliver({ chatId, sessionId, text, inbound: [], options: toolSendOptions(options) }, signal);
  }

  /** A notice of the channel's own (a message given up after restarts) to a chat, through the ledger like a reply. */
  readonly #notify: Notify = (chatId, text, origin) => this.#record(chatId, `telegram:${chatId}`, text, origin);

  async #record(chatId: string, sessionId: string, text: string, origin: OutboundOrigin): Promise<void> {
    const ledger = this.#ledger;
    if (!ledger) {
      log.error(`telegram.send undeliverable session_id=${sessionId} chat_id=${chatId}: the channel is not running`);
      return;
    }
    await ledger.enqueue({ chatId, sessionId, text, inbound: [...(origin.inbound ?? [])], ...(origin.key === undefined ? {} : { key: origin.key }) }, origin);
  }
}

/** The Telegram channel for the builtin plugin's `provideChannels`. */
export function createTelegramChannel(framework: TelegramFramework, options: TelegramChannelOptions): TelegramChannel {
  return new TelegramChannel(framework, options);
}
