/**
 * The `queue` settings section and how the cluster is switched on: several gateway
 * processes share one inbound queue when `BUB_DATABASE_URL` is set.
 */
import { defineSettings, type SettingsOf } from "../../config/settings.ts";
import type { SettingsStore } from "../../kernel/settings-contract.ts";
import type { queueSchema } from "./schema.ts";

/** Resolved queue settings. */
export type QueueSettings = SettingsOf<typeof queueSchema>;

/** The `queue` section (env prefix `BUB_QUEUE_`); zod loads only when it is first resolved. */
export const queueSettings = defineSettings<typeof queueSchema>({
  id: "queue",
  section: "queue",
  schema: async () => (await import("./schema.ts")).queueSchema,
});

/** The configured `BUB_DATABASE_URL`, trimmed; "" when it is not set (no shared queue then). */
export function clusterDatabaseUrl(settings: Pick<SettingsStore, "getValue">): string {
  const value = settings.getValue("database_url", null);
  return typeof value === "string" ? value.trim() : "";
}
