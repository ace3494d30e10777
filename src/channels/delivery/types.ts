/**
 * The records of the outbound delivery ledger and the store contract every backing store
 * (SQLite under the home, a PostgreSQL table) implements. See ./ledger.ts for how they are used.
 */

/** Where an outbound stands: waiting to be sent (or retried), given up (a dead letter), or sent once the connection had died. */
export type DeliveryState = "pending" | "dead" | "sent";

/** One outbound as the ledger keeps it. */
export interface DeliveryRecord {
  /** The ledger's id (ascending in the order outbounds were recorded). */
  id: number;
  /** Which channel and bot it belongs to, e.g. `telegram-4242`. */
  source: string;
  chatId: string;
  sessionId: string;
  /** The text to send. */
  text: string;
  /** How the channel sends it, as the channel wrote it (JSON, or "" for a plain reply). */
  options: string;
  /** The inbound item ids (Telegram update ids) whose turn produced it. */
  inbound: number[];
  /** Parts of the text already confirmed by the channel (a reply may take several messages). */
  partsDone: number;
  /** Failed tries so far. */
  attempts: number;
  state: DeliveryState;
  /** A try was cut off after the request left (the connection died): the chat may have it twice. */
  possiblyRepeated: boolean;
  /** The last failure, one line. */
  error: string;
  /** Unix time in milliseconds. */
  createdAt: number;
  updatedAt: number;
  /**
   * Set by {@link DeliveryStore.record}: an older pending record of the same chat belongs to
   * another process (several gateways on one database), so this one must wait behind it.
   */
  blocked?: boolean;
}

/**
 * What is recorded for a new outbound. `key`, when given, names the outbound for good (a
 * queued turn's reply: its message key and reply index): a second outbound with a key the
 * ledger has seen is not recorded, even after the first was sent and forgotten (keys are
 * kept for {@link KEY_KEEP_DAYS} days); an earlier copy still pending is sent instead.
 */
export type NewDelivery = Pick<DeliveryRecord, "source" | "chatId" | "sessionId" | "text" | "inbound"> & { key?: string; options?: string };

/**
 * Offered with an outbound by a caller that can make its confirmation durable together with
 * a write of its own (a queued turn's last reply, confirmed by the statement that ends the
 * turn's job): one statement instead of two. Only for an outbound not possibly repeated.
 */
export interface DeliveryHandoff {
  /** The outbound was recorded as `id` and queued for sending (an earlier copy taken over counts). */
  queued(id: number): void;
  /**
   * The channel confirmed every part of record `id` (`possiblyRepeated`: an earlier try's
   * connection died, the record is kept as `sent`; always declined). Null: declined, the
   * ledger confirms it now. A promise: taken, the ledger goes on sending; it resolves true once the caller has
   * deleted the record durably (as {@link DeliveryStore.confirm} with `possiblyRepeated`
   * false would), false when it could not (the ledger then confirms it). Until then a kill -9
   * may send the record again: at most one per caller (a turn's job) that took it.
   */
  sent(id: number, possiblyRepeated: boolean): Promise<boolean> | null;
}

/** What an outbound `DeliveryLedger.enqueue` (./ledger.ts) queues waits for. */
export interface EnqueueOrder {
  /** It is sent only once this settles. */
  after?: Promise<void>;
  /** Its confirmation once sent is offered to the caller first (see {@link DeliveryHandoff}). */
  handoff?: DeliveryHandoff;
  /**
   * Called once it was sent: the store confirms it (and forgets it) only after the promise
   * this answers settles. A channel whose own record of the turn is made durable later than
   * the send (the inbound journal's `done` line) keeps the ledger's copy until then.
   */
  confirmAfter?: () => Promise<void>;
}

/** How long the ledger remembers the keys of outbounds it recorded: longer than a queued message can wait or be retried. */
export const KEY_KEEP_DAYS = 30;

/**
 * A durable ledger store. Every write resolves only once it is durable. `owner` names the
 * process that sends a record: a record another process owns is left to it while its lease
 * runs (several gateways on PostgreSQL); `bub delivery retry` clears the owner so the next
 * sweep of a running gateway takes the record.
 */
export interface DeliveryStore {
  /** `sqlite <path>` or `postgres <host:port/database>`, for messages. */
  readonly where: string;
  /**
   * Records new outbounds (owned by `owner`), in order; answers them with their ids. One
   * whose `key` was recorded before is not recorded: when the earlier copy is still pending
   * under another owner (a process that died), that copy is taken over by `owner` and
   * answered in its place; else nothing is answered for it.
   */
  record(owner: string, deliveries: readonly NewDelivery[]): Promise<DeliveryRecord[]>;
  /** Records that the first `partsDone` parts of a record were confirmed. */
  progress(id: number, partsDone: number): Promise<void>;
  /** The channel confirmed the last part: forgotten, or kept as `sent` when it was possibly repeated. */
  confirm(id: number, possiblyRepeated: boolean): Promise<void>;
  /** A failed try that will be retried. */
  failed(id: number, attempts: number, possiblyRepeated: boolean, error: string): Promise<void>;
  /** Given up: moved to the dead letters. */
  deadLetter(id: number, attempts: number, possiblyRepeated: boolean, error: string): Promise<void>;
  /**
   * Takes the pending records of `source` that no live process sends: ownerless ones, ones
   * whose owner's lease ran out, and with `takeOver` every pending one (one gateway per
   * home); renews the lease of this owner's records. Answers the records taken, by id.
   */
  claim(source: string, owner: string, takeOver: boolean): Promise<DeliveryRecord[]>;
  /**
   * For a chat whose record `beforeId` waits behind other processes' records: takes the older
   * pending ones whose owner's lease ran out (or that have no owner), and says whether any
   * older one is still leased by a live process.
   */
  takeOlder(source: string, chatId: string, beforeId: number, owner: string): Promise<{ taken: DeliveryRecord[]; held: boolean }>;
  /** Records in these states (all sources), oldest first, at most `limit`. */
  list(states: readonly DeliveryState[], limit?: number): Promise<DeliveryRecord[]>;
  /** Dead letters with these ids (every one when null) back to pending, ownerless, attempts reset; answers how many. */
  retry(ids: readonly number[] | null): Promise<number>;
  /** Removes dead letters and possibly repeated `sent` records with these ids (every one when null); answers how many. */
  purge(ids: readonly number[] | null): Promise<number>;
  close(): Promise<void>;
}
