/**
 * The statements the graphile-worker engine (./graphile.ts) runs beside graphile-worker's
 * own: the accepted messages' keys, the accept (keys, jobs and steering notices in one
 * statement), a cut-off message put back in its place, and the move of what a pg-boss queue
 * of the same source still holds (an older bub's database).
 */
import type { PoolClient } from "pg";
import { STEER_BATCH } from "./job.ts";

/** graphile-worker's schema (its default). */
export const WORKER_SCHEMA = "graphile_worker";

/** A message runs at most twice: once, and once again when its process died or its turn was cut off. */
export const MAX_ATTEMPTS = 2;

/** How long an accepted message's key is remembered (a source resending it later is ignored). */
const KEEP_ACCEPTED_DAYS = 7;

/** The named queue (one turn at a time) of a session in the inbound queue `queue`. */
export function sessionQueue(queue: string, session: string): string {
  return `${queue}:${session}`;
}

/**
 * Our table beside graphile-worker's: the keys of the messages accepted (graphile-worker
 * forgets a job once done). And one index of ours on graphile-worker's jobs, by their named
 * queue (a session): the turn's end ({@link completeSql}) looks up whether its session has
 * a message waiting, which graphile-worker's own indexes (by time, for fetching) cannot
 * answer without reading every job queued. Created under the schema lock of ./graphile.ts,
 * after graphile-worker's migrations.
 */
export const SCHEMA_SQL = `
CREATE TABLE IF NOT EXISTS bub_queue_accepted (
  message_key text PRIMARY KEY,
  accepted_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS bub_jobs_by_queue ON ${WORKER_SCHEMA}._private_jobs (job_queue_id);
DELETE FROM bub_queue_accepted WHERE accepted_at < now() - make_interval(days => ${KEEP_ACCEPTED_DAYS});`;

/**
 * $1 keys, $2 session queue names, $3 payloads (JSON text), in arrival order; $4 the task
 * (the inbound queue's name), $5 the attempts, $6 the steering channel. Answers the keys
 * newly queued, announced on the steering channel in the same statement: one notification
 * per {@link STEER_BATCH} of them, as ./job.ts `steerNotifications` writes it (graphile-worker's
 * `add_jobs` wakes the workers with one notification too).
 *
 * graphile-worker takes a queue's jobs by `run_at` and nothing else: the messages of one
 * statement get times a microsecond apart, in arrival order (the next statement's `now()`
 * comes after them: inserting n rows takes longer than n microseconds).
 *
 * With `tapeEnds` (the tapes are in this database), $7 names each message's session tape (''
 * for none): a message that is the first of its session in the statement, with nothing of its
 * session queued or running, gets where that tape ends in its payload (`tapeEnd`). No turn of
 * the session can write the tape before its own starts (one turn per session at a time). A
 * message queued behind another of its session gets none: its turn reads the tape.
 */
function acceptSql(tapeEnds: boolean): string {
  // The tape end goes in as text, spliced before the payload's closing brace (the payload is
  // an object written by JSON.stringify): the payload is parsed once, by the cast to json.
  const payload = tapeEnds
    ? `(CASE WHEN i.tape <> '' AND i.n = (SELECT min(h.n) FROM input h WHERE h.queue_name = i.queue_name)
           AND NOT EXISTS (SELECT 1 FROM ${WORKER_SCHEMA}._private_jobs j WHERE j.job_queue_id = (SELECT q.id FROM ${WORKER_SCHEMA}._private_job_queues q WHERE q.queue_name = i.queue_name))
         THEN left(i.payload, -1) || ',"tapeEnd":' || coalesce((SELECT json_build_object('id', e.id, 'date', e.date)::text FROM bub_tape_entries e WHERE e.tape = i.tape ORDER BY e.id DESC LIMIT 1), '{"id":0,"date":""}') || '}'
         ELSE i.payload END)::json`
    : "i.payload::json";
  return `
WITH input AS (
  SELECT key, queue_name, payload${tapeEnds ? ", tape" : ""}, n
    FROM unnest($1::text[], $2::text[], $3::text[]${tapeEnds ? ", $7::text[]" : ""}) WITH ORDINALITY AS t(key, queue_name, payload${tapeEnds ? ", tape" : ""}, n)
), fresh AS (
  INSERT INTO bub_queue_accepted (message_key) SELECT key FROM input ORDER BY n
  ON CONFLICT DO NOTHING RETURNING message_key
), specs AS MATERIALIZED (
  SELECT ARRAY(
    SELECT ROW($4::text, ${payload}, i.queue_name, now() + (i.n - 1) * interval '1 microsecond', $5::int, NULL, NULL, NULL)::${WORKER_SCHEMA}.job_spec
      FROM input i JOIN fresh f ON f.message_key = i.key ORDER BY i.n
  ) AS specs
), added AS (
  SELECT jobs.* FROM specs, LATERAL ${WORKER_SCHEMA}.add_jobs(specs.specs) AS jobs WHERE cardinality(specs.specs) > 0
), notified AS (
  SELECT pg_notify($6, json_build_object('queue', $4::text, 'jobs', json_agg(json_build_object('id', a.id::text, 'session', a.payload->>'session') ORDER BY a.id))::text)
    FROM (SELECT added.id, added.payload, row_number() OVER (ORDER BY added.id) AS r FROM added) a
   GROUP BY (a.r - 1) / ${STEER_BATCH}
)
SELECT added.payload->>'key' AS key FROM added WHERE (SELECT count(*) FROM notified) > 0 ORDER BY added.id`;
}

export const ACCEPT_SQL = acceptSql(false);
export const ACCEPT_TAPE_ENDS_SQL = acceptSql(true);

/** $1 a job id: its payload while no process has taken it. */
export const WAITING_SQL = `SELECT payload FROM ${WORKER_SCHEMA}._private_jobs WHERE id = $1::bigint AND locked_at IS NULL AND attempts < max_attempts`;

/**
 * The turn's end in one statement (graphile-worker's own completion of the job afterwards
 * then finds nothing left to do): $1 the job, $2 the pool that holds it; with `steered`, $3
 * the waiting jobs its turn read (steered into it), done too; with `confirm`, the last
 * parameter is the delivery ledger's record of the turn's last reply, sent by now
 * (../delivery/postgres-store.ts), deleted as the ledger's own confirmation would: one
 * statement, one commit, for what took two. When the session has a message waiting, a worker
 * is woken for it (graphile-worker wakes workers on new jobs only; the waiting one became
 * available just now).
 *
 * A turn that read no waiting job runs the shape without them: with the list of ids as a
 * parameter, the server plans the statement again each time (an empty list looks cheaper),
 * which cost as much CPU as running it.
 */
export function completeSql({ steered, confirm }: { steered: boolean; confirm: boolean }): string {
  const ctes = [
    confirm ? `confirmed AS (
  DELETE FROM bub_deliveries WHERE id = $${steered ? 4 : 3}::bigint
)` : "",
    steered ? `consumed AS (
  DELETE FROM ${WORKER_SCHEMA}._private_jobs WHERE id = ANY($3::bigint[]) AND locked_at IS NULL
)` : "",
    `done AS (
  DELETE FROM ${WORKER_SCHEMA}._private_jobs WHERE id = $1::bigint AND locked_by = $2::text RETURNING job_queue_id
)`,
    `unlocked AS (
  UPDATE ${WORKER_SCHEMA}._private_job_queues AS queues SET locked_by = NULL, locked_at = NULL
    FROM done WHERE queues.id = done.job_queue_id AND queues.locked_by = $2::text RETURNING queues.id
)`,
  ].filter((cte) => cte !== "");
  return `
WITH ${ctes.join(", ")}
SELECT pg_notify('jobs:insert', '{"count":1}') FROM unlocked
 WHERE EXISTS (SELECT 1 FROM ${WORKER_SCHEMA}._private_jobs j WHERE j.job_queue_id = unlocked.id AND j.locked_at IS NULL AND j.id <> $1::bigint${steered ? " AND j.id <> ALL($3::bigint[])" : ""})`;
}

/**
 * The ends of several turns in one statement, as {@link completeSql} ends one: $1 the jobs,
 * $2 the pool holding each, $3 the waiting jobs their turns read; with `confirm`, $4 the
 * delivery records their last replies confirm. Wakes one worker per session that has a
 * message waiting.
 */
export function completeManySql({ confirm }: { confirm: boolean }): string {
  return `
WITH ${confirm ? "confirmed AS (\n  DELETE FROM bub_deliveries WHERE id = ANY($4::bigint[])\n), " : ""}consumed AS (
  DELETE FROM ${WORKER_SCHEMA}._private_jobs WHERE id = ANY($3::bigint[]) AND locked_at IS NULL
), done AS (
  DELETE FROM ${WORKER_SCHEMA}._private_jobs AS jobs USING unnest($1::bigint[], $2::text[]) AS t(id, holder)
   WHERE jobs.id = t.id AND jobs.locked_by = t.holder RETURNING jobs.job_queue_id, t.holder
), unlocked AS (
  UPDATE ${WORKER_SCHEMA}._private_job_queues AS queues SET locked_by = NULL, locked_at = NULL
    FROM done WHERE queues.id = done.job_queue_id AND queues.locked_by = done.holder RETURNING queues.id
)
SELECT pg_notify('jobs:insert', json_build_object('count', count(*))::text) FROM unlocked
 WHERE EXISTS (SELECT 1 FROM ${WORKER_SCHEMA}._private_jobs j WHERE j.job_queue_id = unlocked.id AND j.locked_at IS NULL AND j.id <> ALL($1::bigint[]) AND j.id <> ALL($3::bigint[]))
HAVING count(*) > 0`;
}

/** $1 job ids: done without running (graphile-worker's own completion of unlocked jobs). */
export const FINISH_WAITING_SQL = `SELECT count(*) FROM ${WORKER_SCHEMA}.complete_jobs($1::bigint[])`;

/**
 * $1 the running job's id, $2 its payload with the runs so far, $3 the attempts left, $4 the
 * pool holding it: the job is replaced by a copy with its original time, so it stays ahead of
 * its session's next message (graphile-worker's own retry would run it seconds later, after
 * that one), and its session's queue is unlocked (graphile-worker's completion, finding the
 * job gone, would not).
 */
export const PUT_BACK_SQL = `
WITH gone AS (
  DELETE FROM ${WORKER_SCHEMA}._private_jobs WHERE id = $1::bigint RETURNING task_id, job_queue_id, run_at, priority
), unlocked AS (
  UPDATE ${WORKER_SCHEMA}._private_job_queues AS queues SET locked_by = NULL, locked_at = NULL
    FROM gone WHERE queues.id = gone.job_queue_id AND queues.locked_by = $4::text
)
SELECT count(*) FROM ${WORKER_SCHEMA}.add_jobs(ARRAY(
  SELECT ROW(t.identifier, $2::json, q.queue_name, g.run_at, $3::int, NULL, g.priority, NULL)::${WORKER_SCHEMA}.job_spec
    FROM gone g JOIN ${WORKER_SCHEMA}._private_tasks t ON t.id = g.task_id
    LEFT JOIN ${WORKER_SCHEMA}._private_job_queues q ON q.id = g.job_queue_id
))`;

/**
 * Moves what the pg-boss queue `queue` (and its dead letters) of an older bub still holds
 * into graphile-worker, in order, in one transaction; answers how many moved. Runs under
 * the schema lock of ./graphile.ts. Nothing to do when pg-boss was never installed.
 */
export async function drainPgBoss(client: PoolClient, queue: string): Promise<number> {
  const { rows } = await client.query<{ present: boolean }>("SELECT to_regclass('pgboss.job') IS NOT NULL AS present");
  if (!rows[0]?.present) return 0;
  await client.query("BEGIN");
  try {
    const moved = await client.query<{ id: string; dead: boolean }>(
      `WITH old AS (
         DELETE FROM pgboss.job WHERE name IN ($1, $1 || '_dead') AND state IN ('created', 'retry', 'active')
         RETURNING name, data, created_on, id
       ), keys AS (
         INSERT INTO bub_queue_accepted (message_key) SELECT data->>'key' FROM old WHERE data ? 'key' ON CONFLICT DO NOTHING
       )
       SELECT jobs.id::text AS id, jobs.payload->>'dead' = 'true' AS dead FROM ${WORKER_SCHEMA}.add_jobs(ARRAY(
         SELECT ROW($1::text, (old.data || jsonb_build_object('dead', old.name <> $1))::json, $1 || ':' || (old.data->>'session'),
                    now() + (row_number() OVER (ORDER BY old.created_on, old.id) - 1) * interval '1 microsecond', $2::int, NULL, NULL, NULL)::${WORKER_SCHEMA}.job_spec
           FROM old WHERE old.data ? 'session' ORDER BY old.created_on, old.id
       )) AS jobs`,
      [queue, MAX_ATTEMPTS],
    );
    const dead = moved.rows.filter((row) => row.dead).map((row) => row.id);
    // The dead letters stay dead letters: out of attempts, for `bub queue retry`.
    if (dead.length > 0) await client.query(`UPDATE ${WORKER_SCHEMA}._private_jobs SET attempts = max_attempts, last_error = 'dead letter of the pg-boss queue' WHERE id = ANY($1::bigint[])`, [dead]);
    await client.query("COMMIT");
    return moved.rows.length;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}
