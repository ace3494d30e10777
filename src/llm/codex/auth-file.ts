/**
 * `<CODEX_HOME>/auth.json`, the file the Codex CLI keeps its ChatGPT sign-in in:
 * `{"tokens": {"access_token", "refresh_token", "expires_at", "account_id"?}, "last_refresh"}`.
 * Writing keeps every other key of the file and leaves it readable by its owner only.
 * Nothing here logs a token.
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { FileRefusedError, readBoundedTextFile, SETTINGS_FILE_MAX_BYTES } from "../../config/bounded-file.ts";
import { BubError, describeError } from "../../kernel/errors.ts";
import { isRecord } from "../../kernel/guards.ts";

/** The claim of an OpenAI token that holds the ChatGPT account. */
export const AUTH_CLAIM = "https://api.openai.com/auth";

/** A signed-in ChatGPT account's tokens. */
export interface CodexTokens {
  readonly accessToken: string;
  readonly refreshToken: string;
  /** When the access token stops working (ms since the epoch). */
  readonly expiresAt: number;
  readonly accountId: string | null;
}

/** The claims of a JWT (its middle part), or null when `token` is not one. */
export function jwtClaims(token: string): Record<string, unknown> | null {
  const parts = token.split(".");
  if (parts.length !== 3 || !parts[1]) return null;
  try {
    const claims: unknown = JSON.parse(Buffer.from(parts[1], "base64url").toString("utf8"));
    return isRecord(claims) ? claims : null;
  } catch {
    return null;
  }
}

/** The ChatGPT account id a token carries (`https://api.openai.com/auth` → `chatgpt_account_id`), or null. */
export function accountIdOf(token: string | null | undefined): string | null {
  if (!token) return null;
  const auth = jwtClaims(token)?.[AUTH_CLAIM];
  const id = isRecord(auth) ? auth.chatgpt_account_id : undefined;
  return typeof id === "string" && id !== "" ? id : null;
}

/** A timestamp given as seconds (or milliseconds) since the epoch or as RFC 3339 text → ms; null when unreadable. */
export function parseTimestamp(value: unknown): number | null {
  if (typeof value === "number" && Number.isFinite(value)) return value > 1e12 ? value : value * 1000;
  if (typeof value === "string" && value.trim() !== "") {
    if (/^\d+(\.\d+)?$/.test(value.trim())) return parseTimestamp(Number(value));
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? null : ms;
  }
  return null;
}

/** `YYYY-MM-DDTHH:MM:SSZ`. */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** The parsed file, `{}` when it does not exist. */
export async function readAuthFile(path: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readBoundedTextFile(path, { maxBytes: SETTINGS_FILE_MAX_BYTES, what: "the Codex login file", tooLargeFix: "remove it and run `bub login openai` again" });
  } catch (error) {
    if (typeof error === "object" && error !== null && "code" in error && error.code === "ENOENT") return {};
    if (error instanceof FileRefusedError) throw new BubError("config", error.message, { cause: error });
    throw new BubError("config", `Cannot read ${path} (${describeError(error)}). Check its permissions, or run \`bub login openai\` again.`, { cause: error });
  }
  try {
    const data: unknown = JSON.parse(text);
    return isRecord(data) ? data : {};
  } catch {
    throw new BubError("config", `${path} is not valid JSON. Remove it and run \`bub login openai\` again.`);
  }
}

/**
 * The tokens stored in the file's data, or null when there are none. The expiry is
 * `expires_at`, else the access token's `exp` claim, else an hour after `last_refresh`,
 * else an hour from `now`.
 */
export function storedTokens(data: Record<string, unknown>, now: number = Date.now()): CodexTokens | null {
  const tokens = data.tokens;
  if (!isRecord(tokens) || typeof tokens.access_token !== "string" || tokens.access_token === "") return null;
  const accessToken = tokens.access_token;
  const refreshToken = typeof tokens.refresh_token === "string" ? tokens.refresh_token : "";
  const lastRefresh = parseTimestamp(data.last_refresh);
  const expiresAt = parseTimestamp(tokens.expires_at) ?? parseTimestamp(jwtClaims(accessToken)?.exp) ?? (lastRefresh !== null ? lastRefresh + 3600_000 : now + 3600_000);
  const stored = typeof tokens.account_id === "string" && tokens.account_id !== "" ? tokens.account_id : null;
  return { accessToken, refreshToken, expiresAt, accountId: stored ?? accountIdOf(accessToken) };
}

/** Writes `data` as the file's content: owner-only (0600), through a temporary file renamed over it. */
async function writeAuthFile(path: string, data: Record<string, unknown>): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
    await chmod(temporary, 0o600);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new BubError("config", `Cannot write ${path} (${describeError(error)}). Check that the folder is writable, or set CODEX_HOME.`, { cause: error });
  }
}

/** Stores `tokens` in the file, keeping its other keys; `last_refresh` becomes `now`. */
export async function saveTokens(path: string, tokens: CodexTokens, now: number = Date.now()): Promise<void> {
  const data = await readAuthFile(path);
  const previous = isRecord(data.tokens) ? data.tokens : {};
  data.tokens = {
    ...previous,
    access_token: tokens.accessToken,
    refresh_token: tokens.refreshToken,
    expires_at: isoSeconds(tokens.expiresAt),
    ...(tokens.accountId ? { account_id: tokens.accountId } : {}),
  };
  data.last_refresh = isoSeconds(now);
  await writeAuthFile(path, data);
}

/**
 * Forgets the stored sign-in (`tokens` and `last_refresh`), keeping the file's other keys;
 * the file is removed when nothing else is in it. Returns whether there were tokens.
 */
export async function removeTokens(path: string): Promise<boolean> {
  const data = await readAuthFile(path);
  const had = storedTokens(data) !== null;
  if (!("tokens" in data) && !("last_refresh" in data)) return had;
  delete data.tokens;
  delete data.last_refresh;
  if (Object.keys(data).length === 0) await rm(path, { force: true });
  else await writeAuthFile(path, data);
  return had;
}
