import { z } from "zod";
import { durationSeconds } from "../../config/duration.ts";

/** Settings of the shared inbound queue (YAML `queue:`; env `BUB_QUEUE_*`), used with `BUB_DATABASE_URL`. */
export const queueSchema = z.object({
  /**
   * The PostgreSQL queue library that keeps the queue: `graphile` (graphile-worker) or
   * `pg-boss`. Every process of one bot must use the same one.
   */
  engine: z.enum(["graphile", "pg-boss"]).default("graphile"),
  /**
   * The longest a queued message's turn may run: a job active longer than this is taken
   * from its process and run again elsewhere (once).
   */
  expire_seconds: durationSeconds({ integer: true }).default(900),
  /**
   * How soon the job of a process that died is run again by another: a running job's
   * process touches it every half of this; a job not touched for this long is retried (at least 10).
   */
  heartbeat_seconds: durationSeconds({ integer: true }).min(10).default(30),
});

/** The queue engines `queue.engine` takes. */
export type QueueEngine = z.infer<typeof queueSchema>["engine"];
