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
