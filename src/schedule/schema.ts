import { z } from "zod";

/** Schedule settings (YAML `schedule:`; env `BUB_SCHEDULE_*`). Imported when first resolved. */
export const scheduleSchema = z.object({
  /** Runs missed while no gateway ran: `run_once` runs each job once at start, `skip` drops them. */
  missed: z.enum(["run_once", "skip"]).default("run_once"),
});
