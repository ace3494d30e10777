/** The `delivery` settings section and where the ledger is kept. */
import { join } from "node:path";
import { defineSettings, type SettingsOf } from "../../config/settings.ts";
import type { SettingsStore } from "../../kernel/settings-contract.ts";
import { clusterDatabaseUrl } from "../cluster/settings.ts";
import type { RetryPolicy } from "./classify.ts";
import type { deliverySchema } from "./schema.ts";
import type { DeliveryStore } from "./types.ts";

/** Resolved delivery settings. */
export type DeliverySettings = SettingsOf<typeof deliverySchema>;

/** The `delivery` section (env prefix `BUB_DELIVERY_`); zod loads only when it is first resolved. */
export const deliverySettings = defineSettings<typeof deliverySchema>({
  id: "delivery",
  section: "delivery",
  schema: async () => (await import("./schema.ts")).deliverySchema,
});

/** The retry bounds the settings give. */
export function retryPolicyOf(settings: DeliverySettings): RetryPolicy {
  return { maxAttempts: settings.max_attempts, backoffMs: settings.backoff_seconds * 1000, maxBackoffMs: Math.max(settings.max_backoff_seconds, settings.backoff_seconds) * 1000 };
}

/** The SQLite ledger file under a home. */
export function sqliteLedgerPath(home: string): string {
  return join(home, "delivery.sqlite3");
}

/**
 * Opens the ledger the settings ask for: the `bub_deliveries` table of `BUB_DATABASE_URL`
 * when it is set (gateways sharing a database share the ledger), else `<home>/delivery.sqlite3`.
 * Answers whether one gateway owns the whole ledger (the SQLite one: one gateway per home).
 * @throws BubError(config) when it cannot be opened.
 */
export async function openDeliveryStore(settings: Pick<SettingsStore, "getValue">, home: string): Promise<{ store: DeliveryStore; exclusive: boolean }> {
  const url = clusterDatabaseUrl(settings);
  if (url !== "") {
    const { openPostgresDeliveryStore } = await import("./postgres-store.ts");
    return { store: await openPostgresDeliveryStore(url), exclusive: false };
  }
  const { openSqliteDeliveryStore } = await import("./sqlite-store.ts");
  return { store: openSqliteDeliveryStore(sqliteLedgerPath(home)), exclusive: true };
}
