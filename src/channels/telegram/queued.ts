/**
 * The Telegram bot on the shared inbound queue (src/channels/cluster/): with `BUB_DATABASE_URL` set,
 * every gateway process of the bot sends the updates it takes (polled or pushed) to the
 * bot's queue before Telegram is told they arrived, and works that queue: a queued update
 * is handed to this process's own bot handlers, so whichever process takes it runs the turn
 * and sends the replies. Button presses (approval answers) are not queued: the process that
 * took one handles it when it asked the question, and else shows it to every process (a
 * NOTIFY), so the one that asked answers it.
 */
import type { Bot } from "grammy";
import type { Update } from "grammy/types";
import { createLogger } from "../../kernel/log.ts";
import type { Envelope } from "../../kernel/envelope.ts";
import type { MessageHandler } from "../../kernel/types.ts";
import type { SettingsStore } from "../../kernel/settings-contract.ts";
import type { JobPayload } from "../cluster/job.ts";
import type { Inbound, InboundQueue } from "../cluster/inbound-queue.ts";
import { openInboundQueue } from "../cluster/open.ts";
import { queueSettings } from "../cluster/settings.ts";
import { QueuedTurns, type RecordedOrigin, type SteeringFramework } from "../cluster/turns.ts";
import { handlerError, isUpdate } from "./narrow.ts";
import type { Notify } from "./polling.ts";

const log = createLogger("bub:telegram");

/** Sent to a chat whose message failed twice (it waits in the dead letters for `bub queue retry`). */
export const DEAD_LETTERED = "Bub stopped twice while working on your message, so it was not answered. Please send it again.";

/** Turns a process runs at once when `BUB_MAX_CONCURRENT_TURNS` is 0 (no bound): the queue needs a number. */
const UNBOUNDED_TURNS = 64;

/**
 * Opens the bot's queue on `url` (`BUB_DATABASE_URL`) with the `queue` settings; the
 * workers start with {@link QueuedUpdates.start}.
 * @throws BubError `config` or `temporary` when the database cannot be used.
 */
export async function openQueuedUpdates(
  options: { url: string; botId: string; settings: SettingsStore } & Omit<QueuedUpdatesOptions, "queue" | "botId">,
): Promise<{ queued: QueuedUpdates; concurrency: number }> {
  const settings = await options.settings.load(queueSettings);
  const queue = await openInboundQueue(settings.engine, {
    url: options.url,
    source: `telegram_${options.botId}`,
    expireSeconds: settings.expire_seconds,
    heartbeatSeconds: settings.heartbeat_seconds,
    tapeEnds: options.tapeOf !== undefined,
  });
  const configured = options.settings.getValue("max_concurrent_turns", UNBOUNDED_TURNS);
  const concurrency = typeof configured === "number" && Number.isInteger(configured) && configured > 0 ? configured : UNBOUNDED_TURNS;
  log.info(`telegram.queue serving bot ${options.botId} from the shared queue ${queue.queue} on ${queue.database} (${concurrency} turns at once here)`);
  return { queued: new QueuedUpdates({ ...options, queue }), concurrency };
}

/** Options of {@link QueuedUpdates}. */
export interface QueuedUpdatesOptions {
  queue: InboundQueue;
  /** The bot's id (the token's part before the colon): it names the messages' keys. */
  botId: string;
  /** For steering a turn that runs in this process with a message another process took. */
  framework?: SteeringFramework;
  /** The tape of a chat's session, when the tapes are in the queue's database (see `tapeEnds` in ../cluster/inbound-queue.ts). */
  tapeOf?: (session: string) => string;
  /** Whether a button's callback data answers an approval question this process asked. */
  asks?: (data: string | undefined) => boolean;
  /** Sends a notice to a chat through the delivery ledger (the channel's). */
  notify: Notify;
  describeError: (error: unknown) => string;
}

/** Approval buttons' callback data (./approval.ts). */
const APPROVAL_PREFIX = "bub_approval:";

/** See the module comment. */
export class QueuedUpdates {
  readonly queue: InboundQueue;
  readonly turns: QueuedTurns;
  readonly #botId: string;
  readonly #describeError: (error: unknown) => string;
  readonly #asks: (data: string | undefined) => boolean;
  readonly #notify: Notify;
  readonly #tapeOf: ((session: string) => string) | undefined;

  constructor(options: QueuedUpdatesOptions) {
    this.#tapeOf = options.tapeOf;
    this.queue = options.queue;
    this.#asks = options.asks ?? (() => true);
    this.#notify = options.notify;
    this.#botId = options.botId;
    this.#describeError = options.describeError;
    this.turns = new QueuedTurns({ queue: options.queue, framework: options.framework });
  }

  /**
   * The acceptance step on the queue: messages go to the queue, keyed by their chat's
   * session; resolves once the queue committed them (only then may Telegram be told they
   * arrived). Other updates (button presses) are handled here, in order.
   */
  async accept(bot: Bot, updates: readonly Update[]): Promise<void> {
    const queued: Inbound[] = [];
    const here: Update[] = [];
    for (const update of updates) {
      const chatId = update.message?.chat.id;
      if (chatId === undefined) here.push(update);
      else {
        const session = `telegram:${chatId}`;
        queued.push({ key: `telegram:${this.#botId}:${update.update_id}`, session, item: update, order: update.update_id, tape: this.#tapeOf?.(session) });
      }
    }
    await this.queue.accept(queued);
    for (const update of here) await this.#press(bot, update);
  }

  /** A button press: handled here when this process asked the question (or it is not an approval's), else shown to the others. */
  async #press(bot: Bot, update: Update): Promise<void> {
    const query = update.callback_query;
    if (!query?.data?.startsWith(APPROVAL_PREFIX) || this.#asks(query.data)) return this.#handle(bot, update);
    // Only what answering needs: a NOTIFY payload is small.
    const message = query.message;
    const press = {
      update_id: update.update_id,
      callback_query: { id: query.id, from: query.from, chat_instance: query.chat_instance, data: query.data, ...(message ? { message: { message_id: message.message_id, date: message.date, chat: message.chat } } : {}) },
    };
    await this.queue.broadcast(press).catch((error: unknown) => log.warn(`telegram.approval could not pass a button press to the other gateways: ${this.#describeError(error)}`));
  }

  /**
   * Works the queue with `concurrency` turns at most and listens for messages that may
   * steer a turn running here. A message that failed twice is told to its chat.
   */
  async start(bot: Bot, concurrency: number): Promise<void> {
    await this.queue.listen((notice) => void this.turns.offerSteering(notice, (item) => this.#handle(bot, item)));
    // A press another process took, on a question this one asked.
    await this.queue.listenBroadcasts((item) => {
      if (isUpdate(item) && this.#asks(item.callback_query?.data)) void this.#handle(bot, item);
    });
    await this.queue.work(
      concurrency,
      (job) => this.turns.run(job, () => this.#handle(bot, job.payload.item)),
      (payload) => this.#tellDeadLettered(payload),
    );
  }

  /** Hands a queued item to the bot's handlers; a handler's failure is logged (the message then started no turn). */
  async #handle(bot: Bot, item: unknown): Promise<void> {
    if (!isUpdate(item)) {
      log.warn("telegram.queue a queued item is not a Telegram update; not run");
      return;
    }
    try {
      await bot.handleUpdate(item);
    } catch (error) {
      log.error(`telegram.update failed chat_id=${String(item.message?.chat.id ?? "?")}: ${this.#describeError(handlerError(error))}`);
    }
  }

  async #tellDeadLettered(payload: JobPayload): Promise<void> {
    if (!isUpdate(payload.item)) return;
    const chatId = payload.item.message?.chat.id;
    if (chatId === undefined) return;
    // Through the delivery ledger, keyed by the message: told once even if two processes see the dead letter.
    await this.#notify(String(chatId), DEAD_LETTERED, { key: `${payload.key}#dead` }).catch((error: unknown) => log.error(`telegram.send undeliverable chat_id=${chatId}: ${this.#describeError(error)}`));
  }

  handOver(message: Envelope, handler: MessageHandler, update?: Update): Promise<void> {
    return this.turns.handOver(message, handler, update);
  }

  sendRecorded(message: Envelope, deliver: (message: Envelope, origin?: RecordedOrigin) => Promise<void>, turnMessage: Envelope | null): Promise<void> {
    return this.turns.sendRecorded(message, deliver, turnMessage);
  }

  /** Stops taking jobs (a shutdown began); the turns running go on. */
  stopWorking(): Promise<void> {
    return this.queue.stopWorking();
  }

  /** Ends the jobs whose turns did not finish (each runs again once, elsewhere or after a restart) and closes the queue. */
  async close(): Promise<void> {
    this.turns.cancelAll();
    await this.queue.close(5000);
  }
}
