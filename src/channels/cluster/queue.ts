/**
 * The shared inbound queue on pg-boss: one queue per inbound source (a Telegram bot) with
 * the `key_strict_fifo` policy, the session id as each job's `singletonKey`, one retry, and
 * a dead-letter queue. Every gateway process sends what it receives here and works the
 * queue, so a session runs one turn at a time across processes, in arrival order, while
 * different sessions spread over the processes.
 *
 * pg-boss does the queueing, the claiming, the expiry of a dead process's jobs, the retry
 * and the dead letters. Written here: the recorded replies (./replies.ts), the steering
 * notice (a NOTIFY on {@link STEER_CHANNEL}, through pg-boss's own listener connection), and
 * unblocking a session whose message went to the dead letters (`key_strict_fifo` holds a
 * failed job's successors back until it is gone).
 *
 * pg-boss and pg are imported by {@link ClusterQueue.open} only.
 */
import type { Db, PgBoss } from "pg-boss";
import { errorMessage } from "../../config/thrown.ts";
import { createLogger } from "../../kernel/log.ts";
import { BubError, describeError } from "../../kernel/errors.ts";
import { describeDatabaseUrl, postgresError } from "../../tape/postgres/errors.ts";
import { checkDatabaseUrl } from "../../tape/postgres/lazy-store.ts";
import { BROADCAST_CHANNEL, broadcastSchema, jobIdOf, parseJobPayload, queueNames, STEER_CHANNEL, steerNoticesOf, steerNotifications, type JobPayload, type SteerNotice } from "./job.ts";
import type { ClusterQueueOptions, InboundQueue, QueuedJob, Inbound } from "./inbound-queue.ts";
import { confirmDelivery } from "./replies.ts";

export type { ClusterQueueOptions, Inbound, QueuedJob } from "./inbound-queue.ts";

const log = createLogger("bub:queue");

/** How often pg-boss's supervisor looks for expired jobs: a third of the shorter of the two limits, between 1 and 10 seconds. */
function superviseSeconds(options: Pick<ClusterQueueOptions, "expireSeconds" | "heartbeatSeconds">): number {
  return Math.max(1, Math.min(10, Math.floor(Math.min(options.expireSeconds, options.heartbeatSeconds) / 3)));
}

/** See the module comment: the pg-boss engine of {@link InboundQueue}. */
export class ClusterQueue implements InboundQueue {
  readonly queue: string;
  readonly deadLetter: string;
  readonly database: string;
  readonly #boss: PgBoss;
  #workerId: string | null = null;
  readonly #listening: Awaited<ReturnType<NonNullable<Db["listen"]>>>[] = [];
  #sweeper: ReturnType<typeof setInterval> | null = null;
  #closed = false;
  /** Every job's limits: set on each job, so a change of the settings applies to the messages queued from then on. */
  readonly #limits: { retryLimit: number; expireInSeconds: number; heartbeatSeconds: number };

  private constructor(boss: PgBoss, options: ClusterQueueOptions, database: string) {
    this.#boss = boss;
    this.#limits = { retryLimit: 1, expireInSeconds: options.expireSeconds, heartbeatSeconds: options.heartbeatSeconds };
    const names = queueNames(options.source);
    this.queue = names.queue;
    this.deadLetter = names.deadLetter;
    this.database = database;
  }

  /**
   * Connects, installs or migrates pg-boss's schema and our table (both safe when several
   * processes start together) and creates the queues when missing.
   * @throws BubError `config` for a bad URL or credentials, `temporary` when the server cannot be reached.
   */
  static async open(options: ClusterQueueOptions, manage = true): Promise<ClusterQueue> {
    const url = checkDatabaseUrl(options.url);
    const database = describeDatabaseUrl(url);
    let PgBossClass: typeof PgBoss;
    try {
      ({ PgBoss: PgBossClass } = await import("pg-boss"));
    } catch (error) {
      throw new BubError("config", `The shared inbound queue could not load pg-boss (${errorMessage(error)}): reinstall bub-ts so that its 'pg-boss' dependency is present.`, { cause: error });
    }
    const interval = superviseSeconds(options);
    const boss = new PgBossClass({
      connectionString: url,
      application_name: "bub queue",
      max: 10,
      connectionTimeoutMillis: 10_000,
      useListenNotify: true,
      schedule: false,
      supervise: manage,
      superviseIntervalSeconds: interval,
      monitorIntervalSeconds: interval,
      openTelemetry: { enabled: false },
    });
    boss.on("error", (error) => log.warn(`queue.pgboss ${error.message.split("\n")[0]}`));
    const queue = new ClusterQueue(boss, options, database);
    try {
      await boss.start();
      await queue.#createQueues();
    } catch (error) {
      await boss.stop({ graceful: false, close: true }).catch(() => undefined);
      throw postgresError(error, url);
    }
    return queue;
  }

  async #createQueues(): Promise<void> {
    const boss = this.#boss;
    // createQueue leaves an existing queue as it is: a second process starting is harmless.
    if (!(await boss.getQueue(this.deadLetter))) await createQuietly(boss, this.deadLetter, { retentionSeconds: 30 * 86400, deleteAfterSeconds: 30 * 86400 });
    if (!(await boss.getQueue(this.queue))) await createQuietly(boss, this.queue, { policy: "key_strict_fifo", ...this.#limits, deadLetter: this.deadLetter, notify: true });
  }

  /**
   * Queues messages (one transaction) and announces each to the process that may be running
   * its session's turn. A message queued before (same key) is not queued again. Resolves with
   * the keys newly queued, once they are committed: only then may the source be told they arrived.
   */
  async accept(messages: readonly Inbound[]): Promise<string[]> {
    if (messages.length === 0) return [];
    const jobs = messages.map(({ key, session, item, order }) => ({ id: jobIdOf(this.queue, key, order), data: { key, session, item }, singletonKey: session, deadLetter: this.deadLetter, ...this.#limits }));
    const inserted = new Set((await this.#boss.insert(this.queue, jobs, { returnId: true })) ?? []);
    const fresh = jobs.filter((job) => inserted.has(job.id));
    if (fresh.length > 0) {
      const notices = steerNotifications(this.queue, fresh.map((job) => ({ id: job.id, session: job.singletonKey })));
      // Best effort: a notice lost here only means the message waits for the running turn (a follow-up).
      await this.#boss
        .getDb()
        .executeSql("SELECT pg_notify($1, notice) FROM unnest($2::text[]) AS notice", [STEER_CHANNEL, notices])
        .catch((error: unknown) => log.warn(`queue.steer could not announce ${fresh.length} message(s): ${describe(error)}`));
    }
    return fresh.map((job) => job.data.key);
  }

  /**
   * Works the queue with `concurrency` handlers at most; a handler's job completes when it
   * resolves and fails (to be retried once, then dead-lettered) when it rejects. Also starts
   * the sweep that unblocks sessions whose message went to the dead letters; `onDeadLetter`
   * hears of each such message once across the processes.
   */
  async work(concurrency: number, handler: (job: QueuedJob) => Promise<void>, onDeadLetter: (payload: JobPayload) => Promise<void>): Promise<void> {
    this.#workerId = await this.#boss.work(this.queue, {
        localConcurrency: Math.max(1, concurrency),
        includeMetadata: true,
        batchSize: 1,
        pollingIntervalSeconds: 2,
        // A new message wakes the workers (NOTIFY); a retried one does not, so they also look every few seconds.
        notifyPollingIntervalSeconds: 5,
      }, async (jobs) => {
      for (const job of jobs) {
        const payload = parseJobPayload(job.data);
        if (!payload) throw new BubError("invalid_input", `queued job ${job.id} does not hold an inbound message; not run`);
        await handler({ id: job.id, retryCount: job.retryCount, payload });
      }
    });
    const sweep = () => void this.unblock(onDeadLetter).catch((error: unknown) => log.warn(`queue.sweep failed: ${describe(error)}`));
    this.#sweeper = setInterval(sweep, 5000);
    this.#sweeper.unref();
    sweep();
  }

  /** Stops taking jobs; the ones running go on. */
  async stopWorking(): Promise<void> {
    const id = this.#workerId;
    this.#workerId = null;
    if (this.#sweeper) clearInterval(this.#sweeper);
    this.#sweeper = null;
    if (id) await this.#boss.offWork(this.queue, { id, wait: false });
  }

  /**
   * Removes from the queue the messages that failed for good (their copy is in the dead
   * letters), so that the rest of their session runs; `onDeadLetter` hears of each.
   */
  async unblock(onDeadLetter: (payload: JobPayload) => Promise<void>): Promise<void> {
    for (const key of await this.#boss.getBlockedKeys(this.queue)) {
      for (const job of await this.#boss.findJobs(this.queue, { key })) {
        if (job.state !== "failed") continue;
        // Only the process whose delete took the row reports it.
        const deleted = await this.#boss.deleteJob(this.queue, job.id);
        const payload = parseJobPayload(job.data);
        if (!("affected" in deleted) || deleted.affected !== 1 || !payload) continue;
        log.warn(`queue.dead_letter message ${payload.key} of session ${payload.session} failed twice; moved to ${this.deadLetter} (bub queue retry)`);
        await onDeadLetter(payload);
      }
    }
  }

  /** Hears steering notices (new messages of any session) until {@link close}. */
  async listen(listener: (notice: SteerNotice) => void): Promise<void> {
    await this.#listen(STEER_CHANNEL, (value) => {
      for (const notice of steerNoticesOf(value, this.queue)) listener(notice);
    });
  }

  /**
   * Shows `item` to every process working this queue (itself included), for what is not
   * queued but concerns one process only (a press on a button another process posted).
   * It must fit a NOTIFY payload (under 8000 bytes as JSON).
   */
  async broadcast(item: unknown): Promise<void> {
    await this.#boss.getDb().executeSql("SELECT pg_notify($1, $2)", [BROADCAST_CHANNEL, JSON.stringify({ queue: this.queue, item })]);
  }

  /** Hears what {@link broadcast} shows until {@link close}. */
  async listenBroadcasts(listener: (item: unknown) => void): Promise<void> {
    await this.#listen(BROADCAST_CHANNEL, (value) => {
      const parsed = broadcastSchema.safeParse(value);
      if (parsed.success && parsed.data.queue === this.queue) listener(parsed.data.item);
    });
  }

  /** LISTENs on `channel` through pg-boss's own listener (reconnected by it); notices that are not JSON are ignored. */
  async #listen(channel: string, listener: (value: unknown) => void): Promise<void> {
    const db = this.#boss.getDb();
    if (!db.listen) return;
    const handle = await db.listen(
      channel,
      (text) => {
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch {
          return;
        }
        listener(value);
      },
      () => undefined,
    );
    this.#listening.push(handle);
  }

  /** A queued message that no process has taken yet (null when it was taken, finished or is unknown). */
  async waiting(id: string): Promise<JobPayload | null> {
    const [job] = await this.#boss.findJobs(this.queue, { id });
    if (!job || job.state !== "created") return null;
    return parseJobPayload(job.data);
  }

  /** Marks queued messages done without running them (they were answered by another turn). */
  async finishWaiting(ids: readonly string[]): Promise<void> {
    if (ids.length > 0) await this.#boss.complete(this.queue, [...ids], null, { includeQueued: true });
  }

  /** pg-boss completes the job itself when the handler resolves: the last reply's confirmation and the steered messages go first. */
  async complete(_job: QueuedJob, consumed: readonly string[], delivery?: number): Promise<void> {
    if (delivery !== undefined) await confirmDelivery(this.#boss.getDb(), delivery);
    await this.finishWaiting(consumed);
  }

  /** Stops working, waits up to `graceMs` for running handlers, then closes the connections. */
  async close(graceMs = 0): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.stopWorking();
    for (const handle of this.#listening.splice(0)) await handle.close().catch(() => undefined);
    await this.#boss.stop({ graceful: graceMs > 0, timeout: Math.max(graceMs, 1), close: true }).catch((error: unknown) => log.warn(`queue.stop ${describe(error)}`));
  }
}

async function createQuietly(boss: PgBoss, name: string, options: Parameters<PgBoss["createQueue"]>[1]): Promise<void> {
  try {
    await boss.createQueue(name, options);
  } catch (error) {
    // Another process created it between the look and the create.
    if (!(await boss.getQueue(name))) throw error;
  }
}

/** The first line of {@link describeError}: pg's messages may run on. */
function describe(error: unknown): string {
  return describeError(error).split("\n")[0] ?? "";
}
