/**
 * The shared inbound queue as the gateway sees it, whatever PostgreSQL queue library keeps
 * it: enqueue a source's messages keyed by their session, work the sessions one message at
 * a time each and many sessions at once, retry a message once when its process died, and
 * set aside (dead-letter) a message that failed twice. `bub queue list|retry` read and move
 * those through {@link ./admin.ts}. The engine is opened by {@link ./open.ts}.
 */
import type { JobPayload, SteerNotice } from "./job.ts";

/** Options every engine opens with. */
export interface ClusterQueueOptions {
  /** `BUB_DATABASE_URL`. */
  url: string;
  /** The inbound source, e.g. `telegram-<bot id>`: it names the queue. */
  source: string;
  /** `BUB_QUEUE_EXPIRE_SECONDS`: the longest a job may stay active. */
  expireSeconds: number;
  /** `BUB_QUEUE_HEARTBEAT_SECONDS`: a running job whose process stopped answering for this long is retried elsewhere. */
  heartbeatSeconds: number;
  /**
   * The session tapes are in this database (`BUB_TAPE_STORE=postgres`) and the messages name
   * theirs (`tape`): the queue then tells each turn where its tape ended (`tapeEnd`, see
   * ./job.ts), so a process holding the tape up to there does not read it again.
   */
  tapeEnds?: boolean;
}

/** One message taken from the queue by this process. */
export interface QueuedJob {
  readonly id: string;
  /** 0 on the first run; 1 when a process running it died (or its turn was cut off) and this is its retry. */
  readonly retryCount: number;
  readonly payload: JobPayload;
}

/** A message to queue, with its `order` in its source (Telegram's update id). */
export type Inbound = JobPayload & { order: number };

/** See the module comment. Every method may reject with the database's error. */
export interface InboundQueue {
  /** The queue's name (`bub_inbound_<source>`). */
  readonly queue: string;
  /** The database, described without its password (for log lines). */
  readonly database: string;
  /**
   * Queues messages (one transaction) and announces each to the process that may be
   * running its session's turn. A message queued before (same key) is not queued again.
   * Resolves with the keys newly queued once they are committed.
   */
  accept(messages: readonly Inbound[]): Promise<string[]>;
  /**
   * Works the queue with `concurrency` handlers at most, one message per session at a
   * time; a handler's message is done when it resolves and fails (to be retried once, then
   * dead-lettered) when it rejects. `onDeadLetter` hears of each dead-lettered message once
   * across the processes.
   */
  work(concurrency: number, handler: (job: QueuedJob) => Promise<void>, onDeadLetter: (payload: JobPayload) => Promise<void>): Promise<void>;
  /** Stops taking messages; the ones running go on. */
  stopWorking(): Promise<void>;
  /** Hears steering notices (new messages of any session) until {@link close}. */
  listen(listener: (notice: SteerNotice) => void): Promise<void>;
  /** Shows `item` to every process working this queue, itself included (under 8000 bytes as JSON). */
  broadcast(item: unknown): Promise<void>;
  /** Hears what {@link broadcast} shows until {@link close}. */
  listenBroadcasts(listener: (item: unknown) => void): Promise<void>;
  /** A queued message no process has taken yet (null when taken, finished or unknown). */
  waiting(id: string): Promise<JobPayload | null>;
  /** Marks queued messages done without running them (another turn answered them). */
  finishWaiting(ids: readonly string[]): Promise<void>;
  /**
   * The turn of `job` ended: marks `consumed` (messages it read as steering) done, in one
   * transaction with the job's own completion where the engine allows it (else the job
   * completes when its handler resolves). `delivery`, when given, is the delivery ledger's
   * record of the turn's last reply, sent by now: it is confirmed (deleted from
   * `bub_deliveries`) in the same transaction. (Which replies were sent is the ledger's to
   * know, by their keys: nothing of them is recorded here.)
   */
  complete(job: QueuedJob, consumed: readonly string[], delivery?: number): Promise<void>;
  /** Stops working, waits up to `graceMs` for running handlers, then closes the connections. */
  close(graceMs?: number): Promise<void>;
}
