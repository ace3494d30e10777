import { defineSettings, type SettingsOf } from "../config/settings.ts";
import type { scheduleSchema } from "./schema.ts";

/** Resolved schedule settings. */
export type ScheduleSettings = SettingsOf<typeof scheduleSchema>;

/** The `schedule` settings section (env prefix `BUB_SCHEDULE_`); zod loads only when it is first resolved. */
export const scheduleSettings = defineSettings<typeof scheduleSchema>({
  id: "schedule",
  section: "schedule",
  schema: async () => (await import("./schema.ts")).scheduleSchema,
});

/** The defaults of `schedule.min_interval_seconds` and `schedule.max_jobs_per_session`. */
export const DEFAULT_MIN_INTERVAL_SECONDS = 60;
export const DEFAULT_MAX_JOBS_PER_SESSION = 20;

/** The settings that bound schedules, named as a user sets them (for error and log lines). */
export const MIN_INTERVAL_SETTING = "BUB_SCHEDULE_MIN_INTERVAL_SECONDS (schedule.min_interval_seconds in config.yml)";
export const MAX_JOBS_SETTING = "BUB_SCHEDULE_MAX_JOBS_PER_SESSION (schedule.max_jobs_per_session in config.yml)";

/** What bounds a session's schedules. */
export interface ScheduleLimits {
  /** Shortest time between two runs of one repeating job (0: none). */
  readonly minIntervalSeconds: number;
  /** Most jobs one session may hold (0: no cap). */
  readonly maxJobsPerSession: number;
}

/** The limits with their defaults. */
export const DEFAULT_SCHEDULE_LIMITS: ScheduleLimits = { minIntervalSeconds: DEFAULT_MIN_INTERVAL_SECONDS, maxJobsPerSession: DEFAULT_MAX_JOBS_PER_SESSION };
