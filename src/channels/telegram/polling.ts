/**
 * Durable intake of Telegram updates, polled or pushed (a webhook): every update is recorded
 * in the inbound journal before Telegram is told it arrived ({@link DurableUpdates.accept}),
 * a recorded update is done only once its turn's replies were sent, and after a restart what
 * the journal still holds is run again (once).
 */
import type { Bot } from "grammy";
import type { Update } from "grammy/types";
import { createLogger } from "../../kernel/log.ts";
import { toEnvelope, type Envelope, type EnvelopeInput } from "../../kernel/envelope.ts";
import type { MessageHandler } from "../../kernel/types.ts";
import type { InboundJournal } from "../inbound-journal.ts";
import type { EnqueueOrder } from "../delivery/types.ts";
import type { PollerElection } from "./poller-lock.ts";
import { ChannelMessage } from "../message.ts";
import { apiSignal, handlerError, isUpdate } from "./narrow.ts";
import type { QueuedUpdates } from "./queued.ts";

const log = createLogger("bub:telegram");

/** Long polling: how long one getUpdates call waits for updates, and the pause after a failed one. */
const POLL_TIMEOUT_SECONDS = 30;
const POLL_RETRY_MS = 3000;
/** The kinds of update the bot asks Telegram for (polling and webhook alike). */
export const ALLOWED_UPDATES = ["message", "callback_query"] as const;
/** Sent for a message whose turn a restart cut off twice (it is not run a third time). */
export const GIVEN_UP = "Bub restarted twice while working on your message, so it was not answered. Please send it again.";

/**
 * What the delivery ledger is told of an outbound besides its text: the journaled updates
 * whose turn it answers, or the key that names it for good (a queued turn's reply), and what
 * its sending and confirmation wait for (see {@link DurableUpdates.sendRecorded}).
 */
export interface OutboundOrigin extends EnqueueOrder {
  inbound?: readonly number[];
  key?: string;
}

/** Sends a text to a chat through the delivery ledger (recorded durably before it resolves). */
export type Notify = (chatId: string, text: string, origin: OutboundOrigin) => Promise<void>;

/** The update being handed to the bot's handlers (updates are handled one at a time). */
interface Handing {
  id: number;
  /** Its message went to the manager (a turn will mark it done). */
  handed: boolean;
  /** It is run again after a restart cut its turn off. */
  retried: boolean;
}

/** The journal-backed intake of one running bot (polling or webhook), and the bookkeeping of its turns. */
export class DurableUpdates {
  readonly #describeError: (error: unknown) => string;
  #polling: Promise<void> | null = null;
  #pollStop: AbortController | null = null;
  #journal: InboundJournal | null = null;
  #queued: QueuedUpdates | null = null;
  #handing: Handing | null = null;
  /** The hand-over under way: the next one starts after it (updates are handled one at a time). */
  #handingOver: Promise<void> = Promise.resolve();
  /** Per chat, the journaled updates handed to the manager whose turn has not started. */
  readonly #unclaimed = new Map<string, Set<number>>();
  /** The journaled update ids of a turn, by its inbound message's lifespan. */
  readonly #turnIds = new WeakMap<object, () => number[]>();
  /** Replies of journaled turns go out one at a time, each recorded before the next leaves. */
  #replying: Promise<void> = Promise.resolve();

  constructor(describeError: (error: unknown) => string) {
    this.#describeError = describeError;
  }

  /** Uses `journal` from now on (until {@link closeJournal}). */
  attach(journal: InboundJournal): void {
    this.#journal = journal;
  }

  /** With several gateways on PostgreSQL: updates go to the shared queue instead of the journal (./queued.ts). */
  attachQueue(queued: QueuedUpdates): void {
    this.#queued = queued;
  }

  /**
   * The one way an update enters the gateway, whether polled or pushed to the webhook:
   * records the updates not seen before durably, then hands them to the bot's handlers,
   * one at a time and in order. Resolves once both are done; only then may Telegram be told
   * they arrived (the poller's next offset, the webhook's 200). An update already recorded
   * (Telegram sent it again) is not handed over again. Rejects, handing nothing over, when
   * the updates could not be recorded.
   */
  async accept(bot: Bot, updates: readonly Update[]): Promise<void> {
    if (this.#queued) return this.#queued.accept(bot, updates);
    const journal = this.#journal;
    if (!journal) throw new Error("the inbound journal is closed");
    const fresh = new Set(await journal.receive(updates.map((update) => ({ id: update.update_id, item: update }))));
    // A repeat may arrive while the first copy is still being written: answer it only once that is on disk.
    if (fresh.size < updates.length) await journal.flush();
    await this.#oneAtATime(async () => {
      for (const update of updates) {
        if (fresh.has(update.update_id)) await this.#handleUpdate(bot, update, false);
      }
    });
  }

  /** Runs `work` after the hand-overs already queued. */
  #oneAtATime(work: () => Promise<void>): Promise<void> {
    const run = this.#handingOver.then(work);
    this.#handingOver = run.catch(() => {});
    return run;
  }

  /**
   * Runs again what the journal holds: updates received but not done. One whose turn had
   * started was cut off by the restart: it is retried once, its message's context saying
   * `retried_after_restart: true`. One whose retry was cut off too is given up: its chat
   * is told to send it again (a message that brings the gateway down is not run for ever).
   * An update in `answered` (its reply is in the delivery ledger) is done without running.
   * The notice to a given-up chat goes through the ledger (`notify`), naming the update, so
   * a restart before the update is marked done does not send it twice.
   * Call it before updates are taken (polling or the webhook).
   */
  async resume(bot: Bot, answered: ReadonlySet<number>, notify: Notify): Promise<void> {
    const journal = this.#journal;
    if (!journal) return;
    const pending = journal.pending();
    if (pending.length === 0) return;
    log.info(`telegram.journal resuming ${pending.length} update(s) received before the restart`);
    for (const entry of pending) {
      if (answered.has(entry.id)) {
        // Its reply was recorded in the delivery ledger, which sends it: the turn is not run again.
        log.info(`telegram.journal update_id=${entry.id} was answered before the restart; its reply is in the delivery ledger`);
        await journal.done([entry.id]);
        continue;
      }
      if (!isUpdate(entry.item)) {
        log.warn(`telegram.journal update_id=${entry.id} is not a Telegram update; dropped`);
        await journal.done([entry.id]);
        continue;
      }
      const update = entry.item;
      if (entry.starts >= 2) {
        const chatId = update.message?.chat.id;
        log.warn(`telegram.journal update_id=${entry.id} chat_id=${String(chatId ?? "?")} was cut off by a restart twice; not run again`);
        if (chatId !== undefined) await notify(String(chatId), GIVEN_UP, { inbound: [entry.id] }).catch((error: unknown) => log.error(`telegram.send undeliverable chat_id=${chatId}: ${this.#describeError(error)}`));
        await journal.done([entry.id]);
        continue;
      }
      if (entry.started) {
        log.warn(`telegram.journal update_id=${entry.id} was cut off by a restart; running it again once`);
        await journal.retried([entry.id]);
      }
      await this.#oneAtATime(() => this.#handleUpdate(bot, update, entry.started));
    }
  }

  /**
   * Starts long polling in the background; polling stops when `signal` aborts or
   * {@link stop} is called. With an `election`, it polls only while this process is the
   * elected poller (see ./poller-lock.ts).
   */
  startPolling(bot: Bot, signal: AbortSignal, election?: PollerElection): void {
    const pollStop = new AbortController();
    this.#pollStop = pollStop;
    this.#polling = election ? this.#pollWhenElected(bot, election, pollStop.signal) : this.#poll(bot, pollStop.signal);
    signal.addEventListener("abort", () => pollStop.abort(), { once: true });
    if (signal.aborted) pollStop.abort();
  }

  /**
   * Long polling that acknowledges updates (the next getUpdates' offset) only once
   * {@link accept} took them.
   */
  async #poll(bot: Bot, signal: AbortSignal): Promise<void> {
    const lastId = this.#journal?.lastId ?? 0;
    let offset = lastId > 0 ? lastId + 1 : undefined;
    while (!signal.aborted) {
      try {
        const updates = await bot.api.getUpdates({ offset, timeout: POLL_TIMEOUT_SECONDS, allowed_updates: [...ALLOWED_UPDATES] }, apiSignal(signal));
        if (updates.length === 0) continue;
        await this.accept(bot, updates);
        offset = Math.max(offset ?? 0, ...updates.map((update) => update.update_id + 1));
      } catch (error) {
        if (signal.aborted) break;
        log.warn(`telegram.polling could not take updates (getUpdates or the journal failed), trying again in ${POLL_RETRY_MS / 1000}s: ${this.#describeError(error)}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, POLL_RETRY_MS);
          signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
        });
      }
    }
  }

  /** Waits to be elected, polls while elected, and stands for election again when the lock is lost. */
  async #pollWhenElected(bot: Bot, election: PollerElection, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const turn = await election.elect(signal);
      if (!turn) return;
      try {
        await this.#poll(bot, AbortSignal.any([signal, turn.lost]));
      } finally {
        await turn.release();
      }
      if (!signal.aborted) log.warn("telegram.poller is no longer the elected poller; standing for election again");
    }
  }

  /** Hands one journaled update to the bot's handlers; one that did not reach a turn is done at once. */
  async #handleUpdate(bot: Bot, update: Update, retried: boolean): Promise<void> {
    const handing: Handing = { id: update.update_id, handed: false, retried };
    this.#handing = handing;
    try {
      await bot.handleUpdate(update);
    } catch (error) {
      const chatId = update.message?.chat.id ?? "?";
      log.error(`telegram.update failed chat_id=${String(chatId)}: ${this.#describeError(handlerError(error))}`);
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
  handOver(input: Envelope | EnvelopeInput, handler: MessageHandler, update?: Update): Promise<void> {
    const message = toEnvelope(input);
    if (this.#queued) return this.#queued.handOver(message, handler, update);
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
   * Hands a reply of a journaled turn to `deliver` (which records it in the delivery ledger,
   * naming the turn's updates) and records the turn's updates as done right after, one reply
   * at a time; the ledger sends the reply only once that line is written, and forgets it only
   * once the line is on disk (the journal's next sync, which need not wait for this reply: it
   * comes with the next update's record or soon after). A kill -9 or a power loss between the
   * two leaves the reply in the ledger, which sends it, and {@link resume} does not run the
   * turn again.
   * Other sends (no `turnMessage`, the message the sending turn answers) go straight to `deliver`.
   */
  async sendRecorded(message: Envelope, deliver: (message: Envelope, origin?: OutboundOrigin) => Promise<void>, turnMessage: Envelope | null): Promise<void> {
    if (this.#queued) return this.#queued.sendRecorded(message, deliver, turnMessage);
    const lifespan = turnMessage?.lifespan;
    const claim = lifespan ? this.#turnIds.get(lifespan) : undefined;
    const journal = this.#journal;
    if (!claim || !journal) return deliver(message);
    const previous = this.#replying;
    const turn = Promise.withResolvers<void>();
    this.#replying = turn.promise;
    const journaled = Promise.withResolvers<void>();
    try {
      await previous;
      await deliver(message, { inbound: claim(), after: journaled.promise, confirmAfter: () => journal.synced() });
      await this.#journalDone(claim(), false);
    } finally {
      journaled.resolve();
      turn.resolve();
    }
  }

  async #journalDone(ids: number[], sync = true): Promise<void> {
    try {
      await this.#journal?.done(ids, sync);
    } catch (error) {
      log.error(`telegram.journal could not record update(s) ${ids.join(",")} as done`, error);
    }
  }

  /** Stops polling and waits for the loop, and every update being handed over, to end. */
  async stop(): Promise<void> {
    this.#pollStop?.abort();
    await this.#polling;
    await this.#handingOver;
  }

  /** Closes the journal; nothing is recorded afterwards. */
  async closeJournal(): Promise<void> {
    const journal = this.#journal;
    this.#journal = null;
    try {
      await journal?.close();
    } catch (error) {
      log.error("telegram.journal close failed", error);
    }
  }
}
