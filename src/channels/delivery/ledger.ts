/**
 * The outbound delivery ledger: every outbound is recorded durably (./types.ts stores)
 * before it is sent, and forgotten once the channel confirmed it. Sending is per chat, in
 * the order recorded, one call at a time per chat; chats are sent to side by side, up to
 * `concurrency` calls in flight (so a `kill -9` can cut at most that many sends between
 * leaving and being confirmed, one per chat), and a chat waiting to retry does not hold up
 * the others. A failed try is classified (./classify.ts): retried with backoff,
 * given up as a dead letter, or, when the connection died after the request left, retried
 * once and marked possibly repeated. Records pending at a restart are sent again; dead
 * letters sent back by `bub delivery retry` are taken by the next sweep.
 */
import { randomUUID } from "node:crypto";
import { createLogger } from "../../kernel/log.ts";
import { errorMessage } from "../../config/thrown.ts";
import { nextStep, type DeliveryFailure, type RetryPolicy } from "./classify.ts";
import type { DeliveryHandoff, DeliveryRecord, DeliveryStore, EnqueueOrder, NewDelivery } from "./types.ts";

const log = createLogger("bub:delivery");

/** How a channel sends a record and reads its failures. */
export interface DeliverySender {
  /**
   * Sends the parts of `record` from `record.partsDone` on, calling `partSent(done, total)`
   * after each part the channel confirmed (and waiting for it). Rejects on the first part
   * that fails. May answer the channel's ids of the messages it sent in this try.
   */
  send(record: DeliveryRecord, partSent: (done: number, total: number) => Promise<void>): Promise<readonly string[] | void>;
  /** The class of a failure `send` rejected with. */
  classify(error: unknown): DeliveryFailure;
}

/** Options of {@link DeliveryLedger}. */
export interface DeliveryLedgerOptions {
  store: DeliveryStore;
  /** The channel and bot, e.g. `telegram-4242`: the ledger sends only this source's records. */
  source: string;
  sender: DeliverySender;
  policy: RetryPolicy;
  /** At start, take every pending record of the source (true with one gateway per home). */
  exclusive: boolean;
  /** How often the store is swept for records sent back by `bub delivery retry` (default 2,000 ms). */
  sweepMs?: number;
  /** Most calls in flight at once, each to another chat (default {@link DEFAULT_CONCURRENCY}). */
  concurrency?: number;
}

/** Calls in flight at once when the options do not say (the `delivery.concurrency` default). */
export const DEFAULT_CONCURRENCY = 16;

/** See the module comment. */
export class DeliveryLedger {
  /** This process's name in the store. */
  readonly owner = randomUUID();
  readonly #options: DeliveryLedgerOptions;
  /** Per chat, its records in the order they go out (the head is the one being tried). */
  readonly #queues = new Map<string, DeliveryRecord[]>();
  readonly #known = new Set<number>();
  /** The inbound item ids of the records taken over at {@link start} (see {@link answeredInbound}). */
  readonly #takenOver = new Set<number>();
  /** Chats whose head may be sent now, in the order they became ready. */
  readonly #ready = new Set<string>();
  /** Chats waiting to retry their head. */
  readonly #waiting = new Map<string, NodeJS.Timeout>();
  /** The records being tried now (a chat's head each). */
  readonly #sending = new Set<DeliveryRecord>();
  /** The tries in flight, and the gate checks (which may read the store), until they settle. */
  readonly #inFlight = new Set<Promise<void>>();
  /** Chats with a try in flight: a chat has one at a time, so its records keep their order. */
  readonly #busyChats = new Set<string>();
  #sweep: NodeJS.Timeout | null = null;
  #closing = false;
  #idle: (() => void)[] = [];
  /** Who waits for a record to be confirmed ({@link deliver}), by id. */
  readonly #waiters = new Map<number, PromiseWithResolvers<readonly string[]>>();
  /** Who confirms a record once it was sent, instead of the store (see {@link DeliveryHandoff}), by id. */
  readonly #handoffs = new Map<number, DeliveryHandoff>();
  /** What a record's confirmation must wait for, by id (see {@link EnqueueOrder.confirmAfter}). */
  readonly #confirmAfter = new Map<number, () => Promise<void>>();
  /** Confirmations taken by a handoff and not settled yet (awaited by {@link close}). */
  readonly #handedOff = new Set<Promise<void>>();

  constructor(options: DeliveryLedgerOptions) {
    this.#options = options;
  }

  /** Where the records are kept, for messages. */
  get where(): string {
    return this.#options.store.where;
  }

  /** Takes the records pending from before (sent in order), and starts sweeping for retried ones. */
  async start(): Promise<void> {
    const pending = await this.#options.store.claim(this.#options.source, this.owner, this.#options.exclusive);
    if (pending.length > 0) log.info(`delivery.resume ${pending.length} outbound(s) recorded before the restart are sent again (${this.where})`);
    for (const record of pending) for (const id of record.inbound) this.#takenOver.add(id);
    for (const record of pending) this.#add(record);
    this.#sweep = setInterval(() => void this.#sweepOnce(), this.#options.sweepMs ?? 2000);
    this.#sweep.unref();
  }

  /**
   * The inbound item ids whose outbounds are recorded (their turns need not run again): those
   * queued now, and those of every record {@link start} took over, also once it was sent and
   * forgotten — the records pending from before go out at once, while the channel still
   * prepares to resume its inbound journal, which must not run their turns again.
   */
  answeredInbound(): Set<number> {
    const ids = new Set(this.#takenOver);
    for (const queue of this.#queues.values()) for (const record of queue) for (const id of record.inbound) ids.add(id);
    return ids;
  }

  /**
   * Records an outbound durably and queues it for sending; resolves once it is recorded
   * (not sent: from then on the ledger answers for it). An outbound whose `key` the ledger
   * has recorded before is dropped. See {@link EnqueueOrder} for what it may wait for.
   */
  async enqueue(delivery: Omit<NewDelivery, "source">, { after, handoff, confirmAfter }: EnqueueOrder = {}): Promise<void> {
    const [record] = await this.#options.store.record(this.owner, [{ ...delivery, source: this.#options.source }]);
    if (record && delivery.key !== undefined && record.text !== delivery.text) log.info(`delivery.duplicate key=${delivery.key} chat_id=${delivery.chatId} session_id=${delivery.sessionId}: an earlier copy (id=${record.id}) was still pending; it is sent instead`);
    if (record && confirmAfter) this.#confirmAfter.set(record.id, confirmAfter);
    if (record && handoff) {
      this.#handoffs.set(record.id, handoff);
      handoff.queued(record.id);
    }
    if (record && after) void after.catch(() => undefined).then(() => this.#add(record));
    else if (record) this.#add(record);
    else if (delivery.key !== undefined) log.info(`delivery.duplicate key=${delivery.key} chat_id=${delivery.chatId} session_id=${delivery.sessionId} was recorded before (an earlier run of its turn); not sent again`);
  }

  /**
   * Records an outbound like {@link enqueue} and waits until the channel confirmed it:
   * resolves with the ids of the messages sent (those of the last try), rejects once it is a
   * dead letter or the ledger closes first (it stays recorded: sent after the restart).
   * `signal` only stops the waiting, not the sending.
   */
  async deliver(delivery: Omit<NewDelivery, "source" | "key">, signal?: AbortSignal): Promise<readonly string[]> {
    const [record] = await this.#options.store.record(this.owner, [{ ...delivery, source: this.#options.source }]);
    if (!record) throw new Error("the delivery ledger recorded nothing");
    const waiter = Promise.withResolvers<readonly string[]>();
    this.#waiters.set(record.id, waiter);
    this.#add(record);
    if (!signal) return waiter.promise;
    const aborted = new Promise<never>((_, reject) => {
      const stop = () => reject(new Error(`stopped waiting; outbound ${record.id} stays in the delivery ledger, which sends it`));
      if (signal.aborted) stop();
      else signal.addEventListener("abort", stop, { once: true });
      void waiter.promise.finally(() => signal.removeEventListener("abort", stop)).catch(() => undefined);
    });
    return Promise.race([waiter.promise, aborted]);
  }

  #settle(id: number, outcome: { ids: readonly string[] } | { error: string }): void {
    const waiter = this.#waiters.get(id);
    if (!waiter) return;
    this.#waiters.delete(id);
    if ("ids" in outcome) waiter.resolve(outcome.ids);
    else waiter.reject(new Error(outcome.error));
  }

  /** Resolves once nothing is ready to send and no send is in flight, or after `timeoutMs`. */
  async drain(timeoutMs: number): Promise<void> {
    if (this.#ready.size === 0 && this.#inFlight.size === 0) return;
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#idle.push(resolve);
    const timer = setTimeout(resolve, timeoutMs);
    await promise;
    clearTimeout(timer);
  }

  /** Stops sending (after the send in flight) and closes the store; what is pending stays recorded. */
  async close(): Promise<void> {
    this.#closing = true;
    if (this.#sweep) clearInterval(this.#sweep);
    for (const timer of this.#waiting.values()) clearTimeout(timer);
    this.#waiting.clear();
    while (this.#inFlight.size > 0) await Promise.all(this.#inFlight);
    await Promise.all(this.#handedOff);
    for (const id of [...this.#waiters.keys()]) this.#settle(id, { error: `the gateway stopped before outbound ${id} was sent; it stays in the delivery ledger and is sent after the restart` });
    await this.#options.store.close();
  }

  async #sweepOnce(): Promise<void> {
    if (this.#closing) return;
    try {
      for (const record of await this.#options.store.claim(this.#options.source, this.owner, false)) this.#add(record);
    } catch (error) {
      log.warn(`delivery.sweep could not read the ledger (${this.where}): ${errorMessage(error)}`);
    }
  }

  /**
   * Queues a record in id order (the order it was recorded in), never ahead of the one being
   * tried. A record recorded behind another process's older ones of its chat waits, when it
   * is the chat's head, until those are sent or taken over (see {@link #gate}): replies of a
   * chat keep their order across gateways.
   */
  #add(record: DeliveryRecord): void {
    if (this.#known.has(record.id)) return;
    this.#known.add(record.id);
    let queue = this.#queues.get(record.chatId);
    if (!queue) this.#queues.set(record.chatId, (queue = []));
    let at = queue.length;
    while (at > 0 && queue[at - 1].id > record.id && !this.#sending.has(queue[at - 1])) at--;
    queue.splice(at, 0, record);
    if (at === 0 && !this.#waiting.has(record.chatId)) this.#markReady(record.chatId);
  }

  #markReady(chatId: string): void {
    this.#ready.add(chatId);
    this.#pump();
  }

  #notifyIdle(): void {
    const idle = this.#idle;
    this.#idle = [];
    for (const resolve of idle) resolve();
  }

  /** Starts a try of each ready chat's head, in the order they became ready, while calls may be added (one per chat). */
  #pump(): void {
    const limit = this.#options.concurrency ?? DEFAULT_CONCURRENCY;
    for (const chatId of this.#ready) {
      if (this.#closing || this.#inFlight.size >= limit) break;
      if (this.#busyChats.has(chatId)) continue;
      this.#ready.delete(chatId);
      if (this.#waiting.has(chatId)) continue; // its retry timer makes it ready again
      const record = this.#queues.get(chatId)?.[0];
      if (!record) continue;
      this.#busyChats.add(chatId);
      const run = this.#tryHead(record)
        .catch((error: unknown) => log.error(`delivery.send id=${record.id} chat_id=${chatId} failed unexpectedly: ${errorMessage(error)}`))
        .finally(() => {
          this.#busyChats.delete(chatId);
          this.#inFlight.delete(run);
          this.#pump();
        });
      this.#inFlight.add(run);
    }
    if (this.#inFlight.size === 0 && (this.#ready.size === 0 || this.#closing)) this.#notifyIdle();
  }

  /** One chat's head: checks its gate, tries it, and drops it once done. */
  async #tryHead(record: DeliveryRecord): Promise<void> {
    if (!(await this.#gate(record))) return;
    this.#sending.add(record);
    const outcome = await this.#attempt(record).finally(() => this.#sending.delete(record));
    if (outcome === "done") this.#dequeue(record);
  }

  /** Drops a chat's head; its next record becomes ready. */
  #dequeue(record: DeliveryRecord): void {
    const queue = this.#queues.get(record.chatId);
    const at = queue ? queue.indexOf(record) : -1;
    if (queue && at >= 0) queue.splice(at, 1);
    this.#known.delete(record.id);
    this.#handoffs.delete(record.id);
    this.#confirmAfter.delete(record.id);
    if (!queue || queue.length === 0) this.#queues.delete(record.chatId);
    else this.#ready.add(record.chatId);
  }

  /**
   * Whether a chat's head may be sent now. A record recorded behind another process's older
   * pending ones of its chat (`blocked`) first takes over those whose process died (they go
   * ahead of it) and waits, checking again every half second, while a live process still
   * has one.
   */
  async #gate(record: DeliveryRecord): Promise<boolean> {
    if (!record.blocked) return true;
    try {
      const { taken, held } = await this.#options.store.takeOlder(this.#options.source, record.chatId, record.id, this.owner);
      for (const older of taken) this.#add(older);
      if (taken.length === 0 && !held) {
        record.blocked = false;
        return true;
      }
      if (taken.length > 0) {
        this.#ready.add(record.chatId);
        return false;
      }
    } catch (error) {
      log.warn(`delivery.order could not read the ledger (${this.where}): ${errorMessage(error)}`);
    }
    const timer = setTimeout(() => {
      this.#waiting.delete(record.chatId);
      if (!this.#closing) this.#markReady(record.chatId);
    }, 500);
    this.#waiting.set(record.chatId, timer);
    return false;
  }

  /**
   * Offers a sent record's confirmation to its {@link DeliveryHandoff}: true when taken (the
   * ledger goes on; should the taker fail to confirm it, the ledger does), false when declined.
   */
  #handOff(record: DeliveryRecord): boolean {
    const handoff = this.#handoffs.get(record.id);
    this.#handoffs.delete(record.id);
    if (!handoff) return false;
    let taken: Promise<boolean> | null;
    try {
      taken = handoff.sent(record.id, record.possiblyRepeated);
    } catch {
      taken = null;
    }
    if (!taken) return false;
    const settled = taken
      .catch(() => false)
      .then(async (confirmed) => {
        if (!confirmed) await this.#options.store.confirm(record.id, false);
      })
      .catch((error: unknown) => log.error(`delivery.confirm id=${record.id} chat_id=${record.chatId}: sent, but not confirmed (${errorMessage(error)}); it may be sent again after a restart`))
      .finally(() => this.#handedOff.delete(settled));
    this.#handedOff.add(settled);
    return true;
  }

  /** One try of a record: `done` (sent, or a dead letter) or `wait` (a retry is scheduled). */
  async #attempt(record: DeliveryRecord): Promise<"done" | "wait"> {
    const { store, sender, policy } = this.#options;
    const where = `id=${record.id} chat_id=${record.chatId} session_id=${record.sessionId}`;
    try {
      const ids = await sender.send(record, async (done, total) => {
        record.partsDone = done;
        if (done < total) await store.progress(record.id, done);
        else if (!this.#handOff(record)) {
          // The chat's next call waits too, so a kill -9 still cuts at most one call per chat.
          await this.#confirmAfter.get(record.id)?.().catch((error: unknown) => log.warn(`delivery.confirm ${where}: what its confirmation waits for failed (${errorMessage(error)}); confirming it anyway`));
          await store.confirm(record.id, record.possiblyRepeated);
        }
      });
      if (record.possiblyRepeated) log.warn(`delivery.sent ${where} after a try whose connection died: the chat may have it twice`);
      this.#settle(record.id, { ids: ids ?? [] });
      return "done";
    } catch (error) {
      let step;
      try {
        step = nextStep(record, sender.classify(error), policy);
      } catch (classifying) {
        step = { action: "dead" as const, attempts: record.attempts + 1, possiblyRepeated: record.possiblyRepeated, error: errorMessage(classifying) };
      }
      record.attempts = step.attempts;
      record.possiblyRepeated = step.possiblyRepeated;
      record.error = step.error;
      try {
        if (step.action === "dead") await store.deadLetter(record.id, step.attempts, step.possiblyRepeated, step.error);
        else await store.failed(record.id, step.attempts, step.possiblyRepeated, step.error);
      } catch (writing) {
        log.error(`delivery.ledger could not record the failure of ${where} (${this.where}): ${errorMessage(writing)}`);
      }
      if (step.action === "dead") {
        this.#settle(record.id, { error: `${step.error} (a dead letter: bub delivery list, bub delivery retry ${record.id})` });
        log.error(`delivery.dead_letter ${where} after ${step.attempts} tr${step.attempts === 1 ? "y" : "ies"}: ${step.error} — see bub delivery list, then bub delivery retry ${record.id}`);
        return "done";
      }
      log.warn(`delivery.retry ${where} try ${step.attempts} failed${step.possiblyRepeated ? " (possibly repeated)" : ""}, again in ${Math.round(step.delayMs) / 1000} s: ${step.error}`);
      const timer = setTimeout(() => {
        this.#waiting.delete(record.chatId);
        if (!this.#closing) this.#markReady(record.chatId);
      }, step.delayMs);
      this.#waiting.set(record.chatId, timer);
      return "wait";
    }
  }
}
