import { defineSettings, type SettingsOf } from "../../config/settings.ts";
import type { cliSchema } from "./schema.ts";

/** Resolved `cli` settings. */
export type CliSettings = SettingsOf<typeof cliSchema>;

/** The `cli` settings section (env prefix `BUB_CLI_`); zod loads only when it is first resolved. */
export const cliSettings = defineSettings<typeof cliSchema>({
  id: "cli",
  section: "cli",
  schema: async () => (await import("./schema.ts")).cliSchema,
});
