import { defineSettings, type SettingsOf } from "../../config/settings.ts";
import type { SettingsStore } from "../../kernel/settings-contract.ts";
import type { telegramSchema } from "./schema.ts";

/** Resolved Telegram settings. */
export type TelegramSettings = SettingsOf<typeof telegramSchema>;

/** The `telegram` settings section (env prefix `BUB_TELEGRAM_`); zod loads only when it is first resolved. */
export const telegramSettings = defineSettings<typeof telegramSchema>({
  id: "telegram",
  section: "telegram",
  schema: async () => (await import("./schema.ts")).telegramSchema,
});

/** Whether a bot token is configured (`BUB_TELEGRAM_TOKEN`): the Telegram channel is enabled then. */
export function hasTelegramToken(settings: Pick<SettingsStore, "getValue">): boolean {
  return String(settings.getValue("telegram.token", "")).trim() !== "";
}

/** A comma-separated allowlist as a set of trimmed entries (usernames lower-cased, `@` dropped). */
export function parseAllowlist(value: string): Set<string> {
  return new Set(
    value
      .split(",")
      .map((entry) => entry.trim().replace(/^@/, ""))
      .filter((entry) => entry !== "")
      .map((entry) => (/^-?\d+$/.test(entry) ? entry : entry.toLowerCase())),
  );
}

/** Where the Telegram webhook's server listens unless `BUB_TELEGRAM_WEBHOOK_LISTEN` says otherwise (`bub ui` takes 8787). */
export const DEFAULT_WEBHOOK_LISTEN = "127.0.0.1:8788";

/**
 * `host:port` (an IPv6 host in brackets) as its parts, or null when it is not one. Port 0
 * picks a free port.
 */
export function parseListen(value: string): { host: string; port: number } | null {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s:[\]]+)):(\d{1,5})$/.exec(value.trim());
  if (!match) return null;
  const port = Number(match[3]);
  const host = match[1] ?? match[2];
  if (host === undefined || port > 65535) return null;
  return { host, port };
}
