/**
 * The access token a Codex call is made with: the stored one while it has more than
 * {@link REFRESH_MARGIN_MS} to live, else a refreshed one (saved back to `auth.json`). When
 * refreshing fails, the old token is used if it has not expired yet.
 */
import { createLogger } from "../../kernel/log.ts";
import { BubError, describeError } from "../../kernel/errors.ts";
import { readAuthFile, saveTokens, storedTokens, type CodexTokens } from "./auth-file.ts";
import { refreshTokens, type GrantFetch } from "./oauth.ts";
import type { CodexSettings } from "./settings.ts";

const log = createLogger("bub:codex");

/** A token closer than this to its expiry is refreshed before a call. */
export const REFRESH_MARGIN_MS = 120_000;

/**
 * Refreshes under way, by auth file. A refresh token works once, so two refreshes at once
 * (two turns, or two frameworks in one process, reading the same file) would leave one of
 * them signed out: concurrent calls share the one under way.
 */
const refreshing = new Map<string, Promise<CodexTokens | null>>();

/** What {@link resolveCodexToken} needs. */
export interface TokenSource {
  readonly authFile: string;
  readonly settings: CodexSettings;
  readonly fetch?: GrantFetch;
  readonly now?: () => number;
}

/** The stored tokens, refreshed first when they are about to expire; null when there are none usable. */
export async function resolveCodexToken(source: TokenSource): Promise<CodexTokens | null> {
  const now = source.now ?? Date.now;
  const tokens = storedTokens(await readAuthFile(source.authFile), now());
  if (!tokens) return null;
  if (tokens.expiresAt - now() > REFRESH_MARGIN_MS) return tokens;
  let pending = refreshing.get(source.authFile);
  if (!pending) {
    pending = refreshAndSave(source, tokens, now).finally(() => refreshing.delete(source.authFile));
    refreshing.set(source.authFile, pending);
  }
  return pending;
}

async function refreshAndSave(source: TokenSource, tokens: CodexTokens, now: () => number): Promise<CodexTokens | null> {
  try {
    if (!tokens.refreshToken) throw new BubError("config", "no refresh token is stored");
    const fresh = await refreshTokens(source.settings, tokens.refreshToken, source.fetch, now);
    const saved = { ...fresh, accountId: fresh.accountId ?? tokens.accountId };
    await saveTokens(source.authFile, saved, now());
    log.info(`codex.token refreshed auth_file=${source.authFile}`);
    return saved;
  } catch (error) {
    log.warn(`codex.token refresh failed: ${describeError(error)}`);
    return tokens.expiresAt > now() ? tokens : null;
  }
}
