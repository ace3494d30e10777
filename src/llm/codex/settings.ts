/**
 * Where signing in with a ChatGPT subscription (OpenAI's Codex OAuth) and the Codex
 * Responses endpoint live. Every endpoint is a setting (YAML `codex:`, env `BUB_CODEX_*`),
 * defaulting to OpenAI's, so tests and proxies can point them elsewhere.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import { defineSettings } from "../../kernel/settings-contract.ts";
import type { codexSchema } from "./schema.ts";

/** The Codex settings (all optional; {@link CODEX_DEFAULTS} fills the gaps). */
export interface CodexSettings {
  /** Folder of `auth.json`; null: `$CODEX_HOME`, else `~/.codex`. */
  home: string | null;
  authorize_url: string;
  token_url: string;
  /** The ChatGPT backend; `/codex` is appended (a trailing `/responses` is dropped). */
  base_url: string;
  /** Where the browser is sent back after signing in; must be a loopback address. */
  redirect_uri: string;
  client_id: string;
}

/** OpenAI's endpoints and the Codex CLI's public OAuth client. */
export const CODEX_DEFAULTS: Readonly<CodexSettings> = {
  home: null,
  authorize_url: "https://auth.openai.com/oauth/authorize",
  token_url: "https://auth.openai.com/oauth/token",
  base_url: "https://chatgpt.com/backend-api",
  redirect_uri: "http://localhost:1455/auth/callback",
  client_id: "app_EMoamEEZ73f0CkXaXp7hrann",
};

/** The `codex` settings section; its zod schema loads on first use. */
export const codexSettings = defineSettings<typeof codexSchema>({
  section: "codex",
  schema: async () => (await import("./schema.ts")).codexSchema,
});

/** `settings` with every missing or empty value taken from {@link CODEX_DEFAULTS}. */
export function withCodexDefaults(settings: Partial<CodexSettings> | null | undefined): CodexSettings {
  const given = (value: string | null | undefined): string | null => (typeof value === "string" && value.trim() !== "" ? value.trim() : null);
  return {
    home: given(settings?.home) ?? CODEX_DEFAULTS.home,
    authorize_url: given(settings?.authorize_url) ?? CODEX_DEFAULTS.authorize_url,
    token_url: given(settings?.token_url) ?? CODEX_DEFAULTS.token_url,
    base_url: given(settings?.base_url) ?? CODEX_DEFAULTS.base_url,
    redirect_uri: given(settings?.redirect_uri) ?? CODEX_DEFAULTS.redirect_uri,
    client_id: given(settings?.client_id) ?? CODEX_DEFAULTS.client_id,
  };
}

/** The folder holding `auth.json`: the `home` setting, else `$CODEX_HOME`, else `~/.codex`. */
export function codexHome(settings: Pick<CodexSettings, "home">, env: NodeJS.ProcessEnv = process.env): string {
  if (settings.home) return settings.home;
  const fromEnv = env.CODEX_HOME;
  return fromEnv && fromEnv.trim() !== "" ? fromEnv : join(env.HOME || homedir(), ".codex");
}

/** `<codex home>/auth.json`. */
export function authFilePath(settings: Pick<CodexSettings, "home">, env: NodeJS.ProcessEnv = process.env): string {
  return join(codexHome(settings, env), "auth.json");
}
