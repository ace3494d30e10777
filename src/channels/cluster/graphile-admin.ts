/**
 * `bub queue list|retry` on the graphile-worker engine (./graphile.ts): each bot's task,
 * its waiting and running messages, and its dead letters (jobs out of attempts, kept by
 * graphile-worker), which `retry` gives one more attempt, behind what their session has waiting.
 */
import type { Pool } from "pg";
import { parseJobPayload, QUEUE_PREFIX } from "./job.ts";
import { WORKER_SCHEMA } from "./graphile-sql.ts";
import type { DeadLetter, QueueCounts } from "./admin.ts";

/** Whether graphile-worker's tables are in this database. */
export async function hasGraphileQueue(pool: Pool): Promise<boolean> {
  const { rows } = await pool.query<{ present: boolean }>(`SELECT to_regclass('${WORKER_SCHEMA}._private_jobs') IS NOT NULL AS present`);
  return rows[0]?.present === true;
}

/** The inbound queues' tasks, with the filter of bub's names. */
const OURS = `t.identifier LIKE '${QUEUE_PREFIX.replace(/_/g, "\\_")}%'`;

/** Counts per inbound queue, from the jobs themselves. */
export async function graphileCounts(pool: Pool): Promise<QueueCounts[]> {
  const { rows } = await pool.query<{ queue: string; queued: number; active: number; dead: number }>(
    `SELECT t.identifier AS queue,
            count(j.id) FILTER (WHERE j.locked_at IS NULL AND j.attempts < j.max_attempts)::int AS queued,
            count(j.id) FILTER (WHERE j.locked_at IS NOT NULL)::int AS active,
            count(j.id) FILTER (WHERE j.locked_at IS NULL AND j.attempts >= j.max_attempts)::int AS dead
       FROM ${WORKER_SCHEMA}._private_tasks t LEFT JOIN ${WORKER_SCHEMA}._private_jobs j ON j.task_id = t.id
      WHERE ${OURS} GROUP BY t.identifier ORDER BY t.identifier`,
  );
  return rows.map((row) => ({ queue: row.queue, queued: row.queued, active: row.active, deadLetters: row.dead }));
}

/** The dead letters: jobs out of attempts. */
export async function graphileDeadLetters(pool: Pool): Promise<DeadLetter[]> {
  const { rows } = await pool.query<{ id: string; queue: string; payload: unknown; failed_at: Date }>(
    `SELECT j.id::text AS id, t.identifier AS queue, j.payload, j.updated_at AS failed_at
       FROM ${WORKER_SCHEMA}._private_jobs j JOIN ${WORKER_SCHEMA}._private_tasks t ON t.id = j.task_id
      WHERE ${OURS} AND j.locked_at IS NULL AND j.attempts >= j.max_attempts ORDER BY j.updated_at, j.id`,
  );
  return rows.map((row) => {
    const payload = parseJobPayload(row.payload);
    return { id: row.id, queue: row.queue, session: payload?.session ?? "?", key: payload?.key ?? "?", failedAt: row.failed_at };
  });
}

/** Gives the dead letters `ids` (every one when null) one more attempt; answers how many. */
export async function graphileRetry(pool: Pool, ids: readonly string[] | null): Promise<number> {
  const numeric = ids?.filter((id) => /^\d+$/.test(id)) ?? null;
  if (numeric && numeric.length === 0) return 0;
  const { rows } = await pool.query<{ moved: number }>(
    `WITH moved AS (
       UPDATE ${WORKER_SCHEMA}._private_jobs j SET max_attempts = j.attempts + 1, run_at = now(), updated_at = now()
         FROM ${WORKER_SCHEMA}._private_tasks t
        WHERE t.id = j.task_id AND ${OURS} AND j.locked_at IS NULL AND j.attempts >= j.max_attempts
          AND ($1::bigint[] IS NULL OR j.id = ANY($1::bigint[]))
        RETURNING j.id
     )
     SELECT count(*)::int AS moved, pg_notify('jobs:insert', json_build_object('count', count(*))::text) FROM moved`,
    [numeric],
  );
  return rows[0]?.moved ?? 0;
}
