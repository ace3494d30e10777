/**
 * Which {@link LinkStore} an installation uses: PostgreSQL when `BUB_DATABASE_URL` is set (the
 * gateways sharing that database share links), else the SQLite database of
 * `BUB_TAPE_STORE=sqlite`, else `<BUB_HOME>/links.json`.
 */
import { join } from "node:path";
import type { SettingsStore } from "../../kernel/settings-contract.ts";
import type { LinkStore } from "./store.ts";

/** Where the links of an installation are. */
export type LinkStorage = { kind: "file"; home: string } | { kind: "sqlite"; home: string; dsn: string } | { kind: "postgres"; url: string };

const text = (value: unknown): string => (typeof value === "string" ? value.trim() : "");

/** The storage the settings name (`database_url`, `tape_store`, `tape_dsn`; every schema must be loaded). */
export function linkStorageOf(settings: Pick<SettingsStore, "getValue">, home: string): LinkStorage {
  const url = text(settings.getValue("database_url", null));
  if (url !== "") return { kind: "postgres", url };
  if (text(settings.getValue("tape_store", "file")).toLowerCase() === "sqlite") {
    return { kind: "sqlite", home, dsn: text(settings.getValue("tape_dsn", null)) };
  }
  return { kind: "file", home };
}

/** Opens the store of `storage` (its module is loaded here, so a gateway starts without any). */
export async function openLinkStore(storage: LinkStorage): Promise<LinkStore> {
  if (storage.kind === "postgres") return (await import("./postgres-store.ts")).createPostgresLinkStore(storage.url);
  if (storage.kind === "sqlite") {
    const [{ createSqliteLinkStore }, { sqlitePathFromDsn }] = await Promise.all([import("./sqlite-store.ts"), import("../../tape/store-from-settings.ts")]);
    return createSqliteLinkStore(storage.dsn !== "" ? sqlitePathFromDsn(storage.dsn) : join(storage.home, "tapes.sqlite3"));
  }
  return (await import("./store.ts")).createFileLinkStore(storage.home);
}

/**
 * A {@link LinkStore} that resolves the settings (importing every section's schema) and
 * opens the configured store on its first call.
 */
export function linkStoreFromSettings(settings: SettingsStore, home: string): LinkStore {
  let opening: Promise<LinkStore> | null = null;
  const store = (): Promise<LinkStore> =>
    (opening ??= (async () => {
      await settings.prepare();
      return openLinkStore(linkStorageOf(settings, home));
    })().catch((error: unknown) => {
      opening = null;
      throw error;
    }));
  return {
    personOf: async (identity) => (await store()).personOf(identity),
    list: async () => (await store()).list(),
    update: async (change) => (await store()).update(change),
    async close() {
      const current = opening;
      opening = null;
      await (await current?.catch(() => null))?.close();
    },
  };
}
