/**
 * The shared inbound queue on graphile-worker: one task per inbound source (a Telegram
 * bot), each message a job of that task in the named queue of its session, so a session
 * runs one turn at a time across processes, in arrival order, while sessions spread over
 * the processes. graphile-worker does the queueing, the claiming (one fetch per free slot,
 * woken by LISTEN/NOTIFY once per new job) and the completion.
 *
 * Written here, around it: which messages were accepted already (./graphile-sql.ts: a
 * poller that died before acknowledging sends them again); telling a process that died
 * from one that lives (./graphile-liveness.ts), so that its messages run again elsewhere
 * within `heartbeat_seconds` and in their place; a message whose turn was cut off (a
 * shutdown) put back in its place instead of graphile-worker's delayed retry, which would
 * let the session's next message overtake it; the dead letters (a job out of attempts),
 * told to their chat once; the steering and broadcast notices.
 *
 * graphile-worker and pg are imported by {@link GraphileQueue.open} only.
 */
import type { Pool } from "pg";
import { EventEmitter } from "node:events";
import type { Job, Runner, WorkerEvents } from "graphile-worker";
import { errorMessage } from "../../config/thrown.ts";
import { createLogger } from "../../kernel/log.ts";
import { BubError, describeError } from "../../kernel/errors.ts";
import { describeDatabaseUrl, postgresError } from "../../tape/postgres/errors.ts";
import { coalescing } from "../../tape/postgres/coalesce.ts";
import { namedStatement } from "../../tape/postgres/named.ts";
import { checkDatabaseUrl } from "../../tape/postgres/lazy-store.ts";
import { BROADCAST_CHANNEL, broadcastSchema, parseJobPayload, queueNames, STEER_CHANNEL, steerNoticesOf, type JobPayload, type SteerNotice } from "./job.ts";
import type { ClusterQueueOptions, Inbound, InboundQueue, QueuedJob } from "./inbound-queue.ts";
import { Liveness } from "./graphile-liveness.ts";
import { ACCEPT_SQL, ACCEPT_TAPE_ENDS_SQL, completeManySql, completeSql, drainPgBoss, FINISH_WAITING_SQL, MAX_ATTEMPTS, PUT_BACK_SQL, SCHEMA_SQL, sessionQueue, WAITING_SQL, WORKER_SCHEMA } from "./graphile-sql.ts";
import { confirmDelivery } from "./replies.ts";

const log = createLogger("bub:queue");

/** The statements every message runs, prepared once per connection (see ../../tape/postgres/named.ts). */
const ACCEPT = namedStatement(ACCEPT_SQL);
const ACCEPT_TAPE_ENDS = namedStatement(ACCEPT_TAPE_ENDS_SQL);
/** The turn's end, by whether it read waiting jobs (steered) and whether it confirms a reply. */
const COMPLETE = {
  alone: namedStatement(completeSql({ steered: false, confirm: false })),
  aloneConfirm: namedStatement(completeSql({ steered: false, confirm: true })),
  steered: namedStatement(completeSql({ steered: true, confirm: false })),
  steeredConfirm: namedStatement(completeSql({ steered: true, confirm: true })),
};
/** The ends of several turns, by whether any confirms a reply. */
const COMPLETE_MANY = { alone: namedStatement(completeManySql({ confirm: false })), confirm: namedStatement(completeManySql({ confirm: true })) };

/** The end of one turn whose job this process holds: see {@link GraphileQueue.complete}. */
interface Completion {
  readonly job: string;
  readonly holder: string;
  /** Waiting jobs the turn read (steered into it). */
  readonly waiting: readonly string[];
  /** The delivery ledger's record of the turn's last reply, sent by now. */
  readonly delivery: number | undefined;
}

/** Turns' ends sent in one statement at most. */
const MAX_COMPLETIONS = 64;

/** A job's payload as graphile-worker holds it: the message and how often its turn was cut off before. */
function retriesOf(data: unknown): number {
  if (typeof data !== "object" || data === null || !("retries" in data)) return 0;
  return typeof data.retries === "number" ? data.retries : 0;
}

/** See the module comment. */
export class GraphileQueue implements InboundQueue {
  readonly queue: string;
  readonly deadLetter: string;
  readonly database: string;
  readonly #pool: Pool;
  readonly #options: ClusterQueueOptions;
  readonly #liveness: Liveness;
  readonly #listeners = new Map<string, (value: unknown) => void>();
  #runner: Runner | null = null;
  /** The pool holding each job running here (graphile-worker's lock on it). */
  readonly #holders = new Map<string, string>();
  /** The turns' ends: those that end while one is being written go together in the next statement. */
  readonly #completions = coalescing((batch: readonly Completion[]) => this.#completeAll(batch), MAX_COMPLETIONS);
  /** Whether the tape store's table is in this database (asked until it is): the tape ends of ./graphile-sql.ts read it. */
  #tapeTable = false;
  #closed = false;

  private constructor(pool: Pool, options: ClusterQueueOptions, database: string) {
    this.#pool = pool;
    this.#options = options;
    const names = queueNames(options.source);
    this.queue = names.queue;
    this.deadLetter = names.deadLetter;
    this.database = database;
    this.#liveness = new Liveness(pool, options.heartbeatSeconds, (channel, payload) => this.#notified(channel, payload));
  }

  /**
   * Connects, installs or migrates graphile-worker's schema and our tables (one process at
   * a time), and moves what a pg-boss queue of the same source still holds into this one.
   * @throws BubError `config` for a bad URL or credentials, `temporary` when the server cannot be reached.
   */
  static async open(options: ClusterQueueOptions): Promise<GraphileQueue> {
    const url = checkDatabaseUrl(options.url);
    let modules: [typeof import("pg"), typeof import("graphile-worker")];
    try {
      modules = await Promise.all([import("pg"), import("graphile-worker")]);
    } catch (error) {
      throw new BubError("config", `The shared inbound queue could not load graphile-worker (${errorMessage(error)}): reinstall bub-ts so that its 'graphile-worker' dependency is present.`, { cause: error });
    }
    const [pg, worker] = modules;
    const pool = new pg.default.Pool({ connectionString: url, application_name: "bub queue", max: 10, connectionTimeoutMillis: 10_000 });
    pool.on("error", (error) => log.warn(`queue.pool ${error.message.split("\n")[0]}`));
    // A connection's own errors are the pool's (graphile-worker checks that every client has a handler).
    pool.on("connect", (client) => client.on("error", () => undefined));
    const queue = new GraphileQueue(pool, options, describeDatabaseUrl(url));
    try {
      const client = await pool.connect();
      try {
        // One process migrates at a time: graphile-worker's own migration is not meant to run twice at once.
        await client.query("SELECT pg_advisory_lock(hashtext('bub-queue-graphile-schema'))");
        await worker.runMigrations({ pgPool: pool, logger: graphileLogger(worker) });
        await client.query(SCHEMA_SQL);
        const moved = await drainPgBoss(client, queue.queue);
        if (moved > 0) log.info(`queue.migrate moved ${moved} message(s) from the pg-boss queue ${queue.queue} to graphile-worker`);
      } finally {
        await client.query("SELECT pg_advisory_unlock(hashtext('bub-queue-graphile-schema'))").catch(() => undefined);
        client.release();
      }
      await queue.#liveness.start();
    } catch (error) {
      await queue.#liveness.stop();
      await pool.end().catch(() => undefined);
      throw postgresError(error, url);
    }
    return queue;
  }

  async accept(messages: readonly Inbound[]): Promise<string[]> {
    if (messages.length === 0) return [];
    const ordered = [...messages].sort((a, b) => a.order - b.order);
    const values = [
      ordered.map((message) => message.key),
      ordered.map((message) => sessionQueue(this.queue, message.session)),
      ordered.map(({ key, session, item, tape }) => JSON.stringify({ key, session, item, tape })),
      this.queue,
      MAX_ATTEMPTS,
      STEER_CHANNEL,
    ];
    const tapeEnds = await this.#hasTapeTable();
    const statement = tapeEnds ? { ...ACCEPT_TAPE_ENDS, values: [...values, ordered.map((message) => message.tape ?? "")] } : { ...ACCEPT, values };
    const { rows } = await this.#pool.query<{ key: string }>(statement);
    return rows.map((row) => row.key);
  }

  /** Whether tape ends are to be marked and can be: asks the database until the tape store's table is there. */
  async #hasTapeTable(): Promise<boolean> {
    if (this.#options.tapeEnds && !this.#tapeTable) {
      const { rows } = await this.#pool.query<{ present: boolean }>("SELECT to_regclass('bub_tape_entries') IS NOT NULL AS present");
      this.#tapeTable = rows[0]?.present === true;
    }
    return this.#tapeTable;
  }

  async work(concurrency: number, handler: (job: QueuedJob) => Promise<void>, onDeadLetter: (payload: JobPayload) => Promise<void>): Promise<void> {
    const worker = await import("graphile-worker");
    const events: WorkerEvents = new EventEmitter();
    events.on("pool:create", ({ workerPool }) => void this.#liveness.mark(workerPool.id));
    this.#runner = await worker.run({
      pgPool: this.#pool,
      concurrency: Math.max(1, concurrency),
      noHandleSignals: true,
      pollInterval: 2000,
      logger: graphileLogger(worker),
      events,
      taskList: { [this.queue]: (data, helpers) => this.#run(helpers.job, handler, onDeadLetter) },
      // Jobs of processes that died are released by the liveness sweep, long before graphile-worker's 4 hours.
      // Fetches take up to 16 jobs (one per session) for the free slots. graphile-worker warns
      // at start when that is below the concurrency; a batch of every slot (64) measured no
      // better and would hold more sessions in one process (docs/benchmarks.md, issue 35).
      // Its own completions find the job gone (complete() ended it, with the turn's last
      // reply): gathered over 250 ms, its documented starting point, one statement per batch.
      preset: { worker: { minResetLockedInterval: 480_000, maxResetLockedInterval: 600_000, localQueue: { size: Math.max(2, Math.min(16, concurrency)), refetchDelay: { durationMs: 20 } }, completeJobBatchDelay: 250 } },
    });
    this.#liveness.sweepDead(this.queue, onDeadLetter);
  }

  async #run(job: Job, handler: (job: QueuedJob) => Promise<void>, onDeadLetter: (payload: JobPayload) => Promise<void>): Promise<void> {
    const payload = parseJobPayload(job.payload);
    if (!payload) throw new BubError("invalid_input", `queued job ${job.id} does not hold an inbound message; not run`);
    const retries = retriesOf(job.payload);
    const retryCount = job.attempts - 1 + retries;
    if (job.locked_by) this.#holders.set(job.id, job.locked_by);
    // `expire_seconds`: a turn running longer is let go here and run again (its turn here goes on).
    let expiry: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<never>((_, reject) => {
      expiry = setTimeout(() => reject(new Error(`its turn ran longer than ${this.#options.expireSeconds}s`)), this.#options.expireSeconds * 1000);
    });
    try {
      await Promise.race([handler({ id: job.id, retryCount, payload }), expired]);
    } catch (error) {
      if (retryCount >= MAX_ATTEMPTS - 1) {
        log.warn(`queue.dead_letter message ${payload.key} of session ${payload.session} failed twice; kept as a dead letter (bub queue retry)`);
        await onDeadLetter(payload).catch(() => undefined);
        // Out of attempts: graphile-worker keeps it, failed for good (our dead letter).
        await this.#pool.query(`UPDATE ${WORKER_SCHEMA}._private_jobs SET max_attempts = attempts WHERE id = $1`, [job.id]);
        throw error;
      }
      // Back in its place, ahead of its session's next message; this run then completes.
      log.info(`queue.retry message ${payload.key} of session ${payload.session} was cut off (${describe(error)}); it runs again`);
      const runs = retries + job.attempts;
      // Where its tape ended is stale by now: its first run may have written it.
      const { tapeEnd: _stale, ...rest } = payload;
      await this.#pool.query(PUT_BACK_SQL, [job.id, JSON.stringify({ ...rest, retries: runs }), Math.max(1, MAX_ATTEMPTS - runs), job.locked_by ?? ""]);
    } finally {
      clearTimeout(expiry);
      this.#holders.delete(job.id);
    }
  }

  async complete(job: QueuedJob, consumed: readonly string[], delivery?: number): Promise<void> {
    const holder = this.#holders.get(job.id);
    const waiting = consumed.filter((id) => /^\d+$/.test(id));
    if (!holder) {
      if (delivery !== undefined) await confirmDelivery({ executeSql: (text, values) => this.#pool.query(text, values) }, delivery);
      await this.finishWaiting(waiting);
      return;
    }
    await this.#completions.load({ job: job.id, holder, waiting, delivery });
  }

  /** Ends the turns of `batch` in one statement (its shape for one turn alone: see ./graphile-sql.ts). */
  async #completeAll(batch: readonly Completion[]): Promise<void[]> {
    const [only] = batch;
    let statement: { name: string; text: string; values: unknown[] };
    if (batch.length === 1 && only) {
      const { job, holder, waiting, delivery } = only;
      const steered = waiting.length > 0;
      const shape = steered ? (delivery === undefined ? COMPLETE.steered : COMPLETE.steeredConfirm) : delivery === undefined ? COMPLETE.alone : COMPLETE.aloneConfirm;
      const values: unknown[] = steered ? [job, holder, waiting] : [job, holder];
      statement = { ...shape, values: delivery === undefined ? values : [...values, delivery] };
    } else {
      const deliveries = batch.flatMap(({ delivery }) => (delivery === undefined ? [] : [delivery]));
      const values: unknown[] = [batch.map(({ job }) => job), batch.map(({ holder }) => holder), batch.flatMap(({ waiting }) => waiting)];
      statement = deliveries.length > 0 ? { ...COMPLETE_MANY.confirm, values: [...values, deliveries] } : { ...COMPLETE_MANY.alone, values };
    }
    await this.#pool.query(statement);
    return batch.map(() => undefined);
  }

  async stopWorking(): Promise<void> {
    const runner = this.#runner;
    this.#runner = null;
    this.#liveness.stopSweeping();
    if (runner) await runner.stop().catch((error: unknown) => log.warn(`queue.stop ${describe(error)}`));
  }

  #notified(channel: string, payload: string): void {
    const listener = this.#listeners.get(channel);
    if (!listener) return;
    try {
      listener(JSON.parse(payload));
    } catch {
      // Not JSON: not ours.
    }
  }

  async listen(listener: (notice: SteerNotice) => void): Promise<void> {
    await this.#listen(STEER_CHANNEL, (value) => {
      for (const notice of steerNoticesOf(value, this.queue)) listener(notice);
    });
  }

  async broadcast(item: unknown): Promise<void> {
    await this.#pool.query("SELECT pg_notify($1, $2)", [BROADCAST_CHANNEL, JSON.stringify({ queue: this.queue, item })]);
  }

  async listenBroadcasts(listener: (item: unknown) => void): Promise<void> {
    await this.#listen(BROADCAST_CHANNEL, (value) => {
      const parsed = broadcastSchema.safeParse(value);
      if (parsed.success && parsed.data.queue === this.queue) listener(parsed.data.item);
    });
  }

  async #listen(channel: string, listener: (value: unknown) => void): Promise<void> {
    this.#listeners.set(channel, listener);
    await this.#liveness.listen(channel);
  }

  async waiting(id: string): Promise<JobPayload | null> {
    if (!/^\d+$/.test(id)) return null;
    const { rows } = await this.#pool.query<{ payload: unknown }>(WAITING_SQL, [id]);
    return rows[0] ? parseJobPayload(rows[0].payload) : null;
  }

  async finishWaiting(ids: readonly string[]): Promise<void> {
    const numeric = ids.filter((id) => /^\d+$/.test(id));
    if (numeric.length > 0) await this.#pool.query(FINISH_WAITING_SQL, [numeric]);
  }

  async close(graceMs = 0): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const runner = this.#runner;
    this.#runner = null;
    this.#liveness.stopSweeping();
    if (runner) {
      const stopped = runner.stop().catch((error: unknown) => log.warn(`queue.stop ${describe(error)}`));
      await Promise.race([stopped, new Promise((resolve) => setTimeout(resolve, Math.max(graceMs, 1)).unref())]);
    }
    await this.#liveness.stop();
    await this.#pool.end().catch((error: unknown) => log.warn(`queue.stop ${describe(error)}`));
  }
}

/** graphile-worker's log lines into ours: warnings and errors only. */
function graphileLogger(worker: typeof import("graphile-worker")): InstanceType<typeof worker.Logger> {
  return new worker.Logger(() => (level, message) => {
    if (level === "error") log.warn(`queue.graphile ${message.split("\n")[0]}`);
    else if (level === "warning") log.info(`queue.graphile ${message.split("\n")[0]}`);
  });
}

/** The first line of {@link describeError}: pg's messages may run on. */
function describe(error: unknown): string {
  return describeError(error).split("\n")[0] ?? "";
}

