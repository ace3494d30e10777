/**
 * Which graphile-worker pools are alive, for the engine of ./graphile.ts. graphile-worker
 * releases the jobs of a pool that died only after 4 hours; here each process keeps one
 * connection of its own open, named after its pool (`application_name` =
 * `bub-worker:<pool id>`) and used every third of `heartbeat_seconds` (its LISTENs and a
 * `SELECT 1`). A pool whose jobs have been locked longer than `heartbeat_seconds` while no
 * such connection was used within `heartbeat_seconds` is dead: a `kill -9` closes its
 * connections at once, a machine that vanished stops using them. Every process looks every
 * few seconds and releases the jobs of dead pools with graphile-worker's
 * `force_unlock_workers`, so they run again, in their place in their session; one that was
 * on its last attempt becomes a dead letter, told to its chat by the process that released it.
 *
 * The same connection carries the LISTENs of the steering and broadcast notices.
 * pg_stat_activity shows another session's `application_name` and `state_change` to the
 * same role (or one with `pg_read_all_stats`): every gateway of a bot uses one role.
 */
import type { Pool, PoolClient } from "pg";
import { createLogger } from "../../kernel/log.ts";
import { describeError } from "../../kernel/errors.ts";
import { parseJobPayload, type JobPayload } from "./job.ts";
import { WORKER_SCHEMA } from "./graphile-sql.ts";

const log = createLogger("bub:queue");

const MARK = "bub-worker:";

/** $1 heartbeat seconds: the pools whose jobs are locked and who did not show they live. */
const DEAD_SQL = `
SELECT coalesce(array_agg(DISTINCT j.locked_by), '{}') AS dead FROM ${WORKER_SCHEMA}._private_jobs j
 WHERE j.locked_by IS NOT NULL AND j.locked_at < now() - make_interval(secs => $1)
   AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.application_name = '${MARK}' || j.locked_by AND a.state_change > now() - make_interval(secs => $1))`;

/** See the module comment. */
export class Liveness {
  readonly #pool: Pool;
  readonly #heartbeatSeconds: number;
  readonly #onNotify: (channel: string, payload: string) => void;
  readonly #channels = new Set<string>();
  #client: PoolClient | null = null;
  #poolId: string | null = null;
  #pinger: ReturnType<typeof setInterval> | null = null;
  #sweeper: ReturnType<typeof setInterval> | null = null;
  #stopped = false;

  constructor(pool: Pool, heartbeatSeconds: number, onNotify: (channel: string, payload: string) => void) {
    this.#pool = pool;
    this.#heartbeatSeconds = heartbeatSeconds;
    this.#onNotify = onNotify;
  }

  /** Opens the process's own connection and keeps it used. */
  async start(): Promise<void> {
    await this.#connect();
    this.#pinger = setInterval(() => void this.#client?.query("SELECT 1").catch(() => undefined), Math.max(1000, (this.#heartbeatSeconds * 1000) / 3));
    this.#pinger.unref();
  }

  async #connect(): Promise<void> {
    const client = await this.#pool.connect();
    client.on("notification", (message) => {
      if (message.payload !== undefined) this.#onNotify(message.channel, message.payload);
    });
    client.on("error", (error) => {
      log.warn(`queue.listen connection lost (${error.message.split("\n")[0]}); reconnecting`);
      client.release(true);
      if (this.#client === client) this.#client = null;
      this.#reconnect();
    });
    for (const channel of this.#channels) await client.query(`LISTEN ${quoteIdent(channel)}`);
    if (this.#poolId) await client.query(`SET application_name = ${quoteLiteral(MARK + this.#poolId)}`);
    this.#client = client;
  }

  #reconnect(): void {
    if (this.#stopped) return;
    setTimeout(() => void this.#connect().catch(() => this.#reconnect()), 1000).unref();
  }

  /** Names the connection after this process's graphile-worker pool: from now on its jobs are known alive. */
  async mark(poolId: string): Promise<void> {
    this.#poolId = poolId;
    await this.#client?.query(`SET application_name = ${quoteLiteral(MARK + poolId)}`).catch((error: unknown) => log.warn(`queue.liveness could not name the connection: ${describe(error)}`));
  }

  /** LISTENs on `channel` (again after a reconnection). */
  async listen(channel: string): Promise<void> {
    this.#channels.add(channel);
    await this.#client?.query(`LISTEN ${quoteIdent(channel)}`);
  }

  /** Starts looking for dead pools every third of `heartbeat_seconds` (1 to 10 s). */
  sweepDead(task: string, onDeadLetter: (payload: JobPayload) => Promise<void>): void {
    const everyMs = Math.max(1, Math.min(10, Math.floor(this.#heartbeatSeconds / 3))) * 1000;
    let busy = false;
    const sweep = () => {
      if (busy) return;
      busy = true;
      void this.releaseDead(task, onDeadLetter)
        .catch((error: unknown) => log.warn(`queue.sweep failed: ${describe(error)}`))
        .finally(() => (busy = false));
    };
    this.#sweeper = setInterval(sweep, everyMs);
    this.#sweeper.unref();
    sweep();
  }

  /** Releases the jobs of dead pools; answers how many were released. */
  async releaseDead(task: string, onDeadLetter: (payload: JobPayload) => Promise<void>): Promise<number> {
    const { rows } = await this.#pool.query<{ dead: string[] }>(DEAD_SQL, [this.#heartbeatSeconds]);
    const dead = rows[0]?.dead ?? [];
    if (dead.length === 0) return 0;
    const client = await this.#pool.connect();
    let released: { payload: unknown; last: boolean }[];
    try {
      await client.query("BEGIN");
      // Rows taken by this process only: two sweeping at once report each message once.
      const locked = await client.query<{ payload: unknown; last: boolean }>(
        `SELECT j.payload, j.attempts >= j.max_attempts AS last FROM ${WORKER_SCHEMA}._private_jobs j JOIN ${WORKER_SCHEMA}._private_tasks t ON t.id = j.task_id
          WHERE j.locked_by = ANY($1::text[]) AND t.identifier = $2 FOR UPDATE OF j SKIP LOCKED`,
        [dead, task],
      );
      released = locked.rows;
      await client.query(`SELECT ${WORKER_SCHEMA}.force_unlock_workers($1::text[])`, [dead]);
      // Wake the workers: the released jobs are available again.
      await client.query("SELECT pg_notify('jobs:insert', json_build_object('count', $1::int)::text)", [Math.max(1, locked.rows.length)]);
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
    log.warn(`queue.retry ${released.length} message(s) of ${dead.length} gateway process(es) that stopped run again`);
    for (const job of released) {
      const payload = parseJobPayload(job.payload);
      if (!job.last || !payload) continue;
      log.warn(`queue.dead_letter message ${payload.key} of session ${payload.session} failed twice; kept as a dead letter (bub queue retry)`);
      await onDeadLetter(payload).catch(() => undefined);
    }
    return released.length;
  }

  stopSweeping(): void {
    if (this.#sweeper) clearInterval(this.#sweeper);
    this.#sweeper = null;
  }

  /** Stops the timers and closes the connection. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.stopSweeping();
    if (this.#pinger) clearInterval(this.#pinger);
    this.#pinger = null;
    const client = this.#client;
    this.#client = null;
    client?.release(true);
  }
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function quoteLiteral(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

function describe(error: unknown): string {
  return describeError(error).split("\n")[0] ?? "";
}
