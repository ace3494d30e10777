/**
 * What `bub queue list` and `bub queue retry` read and do: every inbound queue of the
 * database (one per bot), its waiting and running messages, and its dead letters, which can
 * be sent back to their queue. Both engines are read: graphile-worker's tables and pg-boss's,
 * whichever the database holds (a database moved from pg-boss may still have pg-boss's
 * schema). pg-boss and pg are imported when {@link openQueueAdmin} runs.
 */
import type { Pool } from "pg";
import type { PgBoss } from "pg-boss";
import { BubError } from "../../kernel/errors.ts";
import { postgresError } from "../../tape/postgres/errors.ts";
import { checkDatabaseUrl } from "../../tape/postgres/lazy-store.ts";
import { DEAD_LETTER_SUFFIX, parseJobPayload, QUEUE_PREFIX } from "./job.ts";

/** A message in the dead letters. */
export interface DeadLetter {
  /** Its id in the dead-letter queue (what `bub queue retry` takes). */
  id: string;
  /** The queue it failed on. */
  queue: string;
  session: string;
  /** The message's key in its source (`telegram:<bot id>:<update id>`). */
  key: string;
  /** When it was moved to the dead letters. */
  failedAt: Date;
}

/** One inbound queue's counts. */
export interface QueueCounts {
  queue: string;
  /** Messages waiting for their turn (including ones waiting to be retried). */
  queued: number;
  /** Messages whose turn runs now. */
  active: number;
  deadLetters: number;
}

/** See the module comment. Close it when done. */
export interface QueueAdmin {
  counts(): Promise<QueueCounts[]>;
  deadLetters(): Promise<DeadLetter[]>;
  /** Sends the dead letters with these ids (every one when null) back to their queue; answers how many moved. */
  retry(ids: readonly string[] | null): Promise<number>;
  close(): Promise<void>;
}

/**
 * Connects to the queue database of `BUB_DATABASE_URL` (no workers, no maintenance).
 * @throws BubError `config` for a missing or bad URL or credentials, `temporary` when the server cannot be reached.
 */
export async function openQueueAdmin(url: string | null | undefined): Promise<QueueAdmin> {
  if (!url || url.trim() === "") throw new BubError("config", "The shared inbound queue needs BUB_DATABASE_URL: set it to postgres://user:password@host:5432/database.");
  const checked = checkDatabaseUrl(url);
  const [{ PgBoss: PgBossClass }, pg, graphile] = await Promise.all([import("pg-boss"), import("pg"), import("./graphile-admin.ts")]);
  const pool = new pg.default.Pool({ connectionString: checked, application_name: "bub queue", max: 2 });
  pool.on("error", () => undefined);
  let withGraphile: boolean;
  let withBoss: boolean;
  try {
    withGraphile = await graphile.hasGraphileQueue(pool);
    const { rows } = await pool.query<{ present: boolean }>("SELECT to_regclass('pgboss.job') IS NOT NULL AS present");
    withBoss = rows[0]?.present === true || !withGraphile;
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw postgresError(error, checked);
  }
  const boss = withBoss ? await startBoss(PgBossClass, checked, pool) : null;
  return new BothAdmins(boss, withGraphile ? { pool, ...graphile } : null, pool, checked);
}

type GraphileAdmin = typeof import("./graphile-admin.ts") & { pool: Pool };

/** pg-boss without workers or maintenance, for reading its queues. */
async function startBoss(PgBossClass: typeof PgBoss, checked: string, pool: Pool): Promise<BossAdmin> {
  const boss = new PgBossClass({ connectionString: checked, application_name: "bub queue", max: 2, supervise: false, schedule: false, registerInstance: false, openTelemetry: { enabled: false } });
  boss.on("error", () => undefined);
  try {
    await boss.start();
  } catch (error) {
    await boss.stop({ graceful: false, close: true }).catch(() => undefined);
    await pool.end().catch(() => undefined);
    throw postgresError(error, checked);
  }
  return new BossAdmin(boss, checked);
}

/** The queues of both engines, as one. */
class BothAdmins implements QueueAdmin {
  readonly #boss: BossAdmin | null;
  readonly #graphile: GraphileAdmin | null;
  readonly #pool: Pool;
  readonly #url: string;

  constructor(boss: BossAdmin | null, graphile: GraphileAdmin | null, pool: Pool, url: string) {
    this.#boss = boss;
    this.#graphile = graphile;
    this.#pool = pool;
    this.#url = url;
  }

  async #graphileCall<T>(body: (graphile: GraphileAdmin) => Promise<T>, none: T): Promise<T> {
    if (!this.#graphile) return none;
    try {
      return await body(this.#graphile);
    } catch (error) {
      throw postgresError(error, this.#url);
    }
  }

  async counts(): Promise<QueueCounts[]> {
    const counts = new Map<string, QueueCounts>();
    for (const row of [...((await this.#boss?.counts()) ?? []), ...(await this.#graphileCall((graphile) => graphile.graphileCounts(graphile.pool), []))]) {
      const seen = counts.get(row.queue);
      counts.set(row.queue, seen ? { queue: row.queue, queued: seen.queued + row.queued, active: seen.active + row.active, deadLetters: seen.deadLetters + row.deadLetters } : row);
    }
    return [...counts.values()].sort((a, b) => a.queue.localeCompare(b.queue));
  }

  async deadLetters(): Promise<DeadLetter[]> {
    const letters = [...((await this.#boss?.deadLetters()) ?? []), ...(await this.#graphileCall((graphile) => graphile.graphileDeadLetters(graphile.pool), []))];
    return letters.sort((a, b) => a.failedAt.getTime() - b.failedAt.getTime());
  }

  async retry(ids: readonly string[] | null): Promise<number> {
    // pg-boss's ids are UUIDs, graphile-worker's numbers.
    const uuids = ids?.filter((id) => !/^\d+$/.test(id)) ?? null;
    const numbers = ids?.filter((id) => /^\d+$/.test(id)) ?? null;
    let moved = 0;
    if (this.#boss && (uuids === null || uuids.length > 0)) moved += await this.#boss.retry(uuids);
    if (numbers === null || numbers.length > 0) moved += await this.#graphileCall((graphile) => graphile.graphileRetry(graphile.pool, numbers), 0);
    return moved;
  }

  async close(): Promise<void> {
    await this.#boss?.close();
    await this.#pool.end();
  }
}

class BossAdmin implements QueueAdmin {
  readonly #boss: PgBoss;
  readonly #url: string;

  constructor(boss: PgBoss, url: string) {
    this.#boss = boss;
    this.#url = url;
  }

  async #queues(): Promise<string[]> {
    const queues = await this.#boss.getQueues();
    return queues
      .map((queue) => queue.name)
      .filter((name) => name.startsWith(QUEUE_PREFIX) && !name.endsWith(DEAD_LETTER_SUFFIX))
      .sort();
  }

  async counts(): Promise<QueueCounts[]> {
    try {
      const queues = await this.#queues();
      const counts = new Map<string, QueueCounts>(queues.map((queue) => [queue, { queue, queued: 0, active: 0, deadLetters: 0 }]));
      // Counted from the jobs themselves: pg-boss's counts are cached and may be a minute old.
      const { rows } = await this.#boss
        .getDb()
        .executeSql("SELECT name, state::text AS state, count(*)::int AS n FROM pgboss.job WHERE name = ANY($1::text[]) AND state IN ('created', 'retry', 'active') GROUP BY name, state", [
          [...queues, ...queues.map((queue) => `${queue}${DEAD_LETTER_SUFFIX}`)],
        ]);
      for (const row of rows) {
        const name = String(row.name);
        const n = typeof row.n === "number" ? row.n : 0;
        const own = counts.get(name);
        const dead = name.endsWith(DEAD_LETTER_SUFFIX) ? counts.get(name.slice(0, -DEAD_LETTER_SUFFIX.length)) : undefined;
        if (dead) dead.deadLetters += n;
        else if (own && row.state === "active") own.active += n;
        else if (own) own.queued += n;
      }
      return [...counts.values()];
    } catch (error) {
      throw postgresError(error, this.#url);
    }
  }

  async deadLetters(): Promise<DeadLetter[]> {
    try {
      const letters: DeadLetter[] = [];
      for (const queue of await this.#queues()) {
        for (const job of await this.#boss.findJobs(`${queue}${DEAD_LETTER_SUFFIX}`, { queued: true })) {
          const payload = parseJobPayload(job.data);
          letters.push({ id: job.id, queue, session: payload?.session ?? job.singletonKey ?? "?", key: payload?.key ?? "?", failedAt: job.createdOn });
        }
      }
      return letters.sort((a, b) => a.failedAt.getTime() - b.failedAt.getTime());
    } catch (error) {
      throw postgresError(error, this.#url);
    }
  }

  async retry(ids: readonly string[] | null): Promise<number> {
    try {
      let moved = 0;
      for (const queue of await this.#queues()) {
        const deadLetter = `${queue}${DEAD_LETTER_SUFFIX}`;
        if (ids !== null) {
          moved += await this.#boss.redrive(deadLetter, { destination: queue, ids: [...ids] });
          continue;
        }
        // Moved in batches until none is left.
        for (let batch = await this.#boss.redrive(deadLetter, { destination: queue }); batch > 0; batch = await this.#boss.redrive(deadLetter, { destination: queue })) moved += batch;
      }
      return moved;
    } catch (error) {
      throw postgresError(error, this.#url);
    }
  }

  async close(): Promise<void> {
    await this.#boss.stop({ graceful: false, close: true });
  }
}
