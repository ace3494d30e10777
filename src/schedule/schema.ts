import { z } from "zod";
import { durationSeconds } from "../config/duration.ts";

/** Schedule settings (YAML `schedule:`; env `BUB_SCHEDULE_*`). Imported when first resolved. */
export const scheduleSchema = z.object({
  /** Runs missed while no gateway ran: `run_once` runs each job once at start, `skip` drops them. */
  missed: z.enum(["run_once", "skip"]).default("run_once"),
  /** Shortest time between two runs of one repeating job, in seconds (`0`: no minimum). */
  min_interval_seconds: durationSeconds({ integer: true, allowZero: true }).default(60),
  /** Most jobs one session (one chat) may hold (`0`: no cap). */
  max_jobs_per_session: z.number().int().min(0).default(20),
});
