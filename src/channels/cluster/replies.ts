/**
 * The replies of queued turns, recorded in PostgreSQL: each reply is recorded (message key
 * and reply index) right after it was sent, and a run of the same message again (a retry
 * after its process died, or a dead letter retried by hand) skips the replies recorded. So a
 * reply is sent twice only when a process dies between sending it and recording it.
 *
 * Neither queue library has this (a job's output is written only when the job ends), so it
 * is a table of our own, created on start under an advisory lock (two processes may start together).
 */
import { createHash } from "node:crypto";

/** How long recorded replies are kept: longer than a message can wait in the queue or its dead letters. */
const KEEP_DAYS = 30;

const LOCK_KEY = createHash("sha256").update("bub-queue-replies-schema").digest().readBigInt64BE(0).toString();

const SCHEMA = `
BEGIN;
SELECT pg_advisory_xact_lock(${LOCK_KEY});
CREATE TABLE IF NOT EXISTS bub_queue_replies (
  message_key text NOT NULL,
  reply_index integer NOT NULL,
  sent_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (message_key, reply_index)
);
COMMIT;`;

/** What the replies need of a connection pool: one statement, its rows. */
export interface SqlRunner {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

/** The recorded replies, through the queue engine's own connection pool. */
export class RecordedReplies {
  readonly #db: SqlRunner;

  constructor(db: SqlRunner) {
    this.#db = db;
  }

  /** Creates the table when it is missing and forgets replies older than the retention. */
  async prepare(): Promise<void> {
    await this.#db.executeSql(SCHEMA);
    await this.prune();
  }

  /** Forgets the replies recorded more than 30 days ago. */
  async prune(): Promise<void> {
    await this.#db.executeSql(`DELETE FROM bub_queue_replies WHERE sent_at < now() - make_interval(days => $1)`, [KEEP_DAYS]);
  }

  /** The indexes of the replies already sent for a message. */
  async sent(messageKey: string): Promise<Set<number>> {
    const { rows } = await this.#db.executeSql("SELECT reply_index FROM bub_queue_replies WHERE message_key = $1", [messageKey]);
    const indexes = new Set<number>();
    for (const row of rows) {
      const index: unknown = row.reply_index;
      if (typeof index === "number") indexes.add(index);
    }
    return indexes;
  }

  /**
   * Confirms a sent reply's record in the delivery ledger (deletes it from `bub_deliveries`,
   * which the ledger created on start in the same database): where the engine cannot fold
   * that into its completion.
   */
  async confirmDelivery(id: number): Promise<void> {
    await this.#db.executeSql("DELETE FROM bub_deliveries WHERE id = $1", [id]);
  }

  /** Records that reply `index` of a message was sent. */
  async record(messageKey: string, index: number): Promise<void> {
    await this.#db.executeSql("INSERT INTO bub_queue_replies (message_key, reply_index) VALUES ($1, $2) ON CONFLICT DO NOTHING", [messageKey, index]);
  }
}
