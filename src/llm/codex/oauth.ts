/**
 * OpenAI's Codex OAuth: the authorization-code flow with PKCE (S256) that signs a ChatGPT
 * account in, and the refresh grant that keeps its access token fresh. Endpoints come from
 * the `codex` settings. Error messages name the endpoint's answer, never a token.
 */
import { createHash, randomBytes } from "node:crypto";
import { BubError, describeError } from "../../kernel/errors.ts";
import { accountIdOf, type CodexTokens } from "./auth-file.ts";
import type { CodexSettings } from "./settings.ts";
import { isRecord } from "../../kernel/guards.ts";

/** The scopes a Codex sign-in asks for. */
export const CODEX_SCOPE = "openid profile email offline_access";

/** The `fetch` the grants are sent with. */
export type GrantFetch = typeof globalThis.fetch;

/** A PKCE pair: the secret verifier and its S256 challenge. */
export interface Pkce {
  readonly verifier: string;
  readonly challenge: string;
}

/** A fresh PKCE pair (a 64-byte random verifier, base64url). */
export function createPkce(): Pkce {
  const verifier = randomBytes(64).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** A random 16-byte state, hex. */
export function randomState(): string {
  return randomBytes(16).toString("hex");
}

/** The URL the user signs in at. */
export function authorizeUrl(settings: CodexSettings, pkce: Pkce, state: string): string {
  const url = new URL(settings.authorize_url);
  const params: Record<string, string> = {
    response_type: "code",
    client_id: settings.client_id,
    redirect_uri: settings.redirect_uri,
    scope: CODEX_SCOPE,
    code_challenge: pkce.challenge,
    code_challenge_method: "S256",
    state,
    id_token_add_organizations: "true",
    codex_cli_simplified_flow: "true",
    originator: "codex_cli_rs",
  };
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  return url.toString();
}

/** Posts a grant to the token endpoint and reads the tokens it answers with. */
async function grant(settings: CodexSettings, form: Record<string, string>, fetch: GrantFetch, now: () => number, previousRefresh?: string): Promise<CodexTokens> {
  let response: Response;
  try {
    response = await fetch(settings.token_url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: new URLSearchParams({ ...form, client_id: settings.client_id }).toString(),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new BubError("temporary", `the token endpoint ${settings.token_url} cannot be reached (${describeError(error)})`, { cause: error });
  }
  const text = await response.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    // reported below
  }
  if (!response.ok) {
    const error = isRecord(body) ? (body.error_description ?? (isRecord(body.error) ? body.error.message : body.error)) : null;
    const what = typeof error === "string" && error !== "" ? `: ${error.slice(0, 200)}` : "";
    throw new BubError(response.status >= 500 ? "temporary" : "config", `the token endpoint answered HTTP ${response.status}${what}`, { details: { status: response.status } });
  }
  if (!isRecord(body) || typeof body.access_token !== "string" || body.access_token === "") {
    throw new BubError("provider", "the token endpoint's answer has no access_token");
  }
  const refreshToken = typeof body.refresh_token === "string" && body.refresh_token !== "" ? body.refresh_token : (previousRefresh ?? "");
  const expiresIn = typeof body.expires_in === "number" && Number.isFinite(body.expires_in) ? body.expires_in : 3600;
  const idToken = typeof body.id_token === "string" ? body.id_token : null;
  return {
    accessToken: body.access_token,
    refreshToken,
    expiresAt: now() + expiresIn * 1000,
    accountId: accountIdOf(body.access_token) ?? accountIdOf(idToken),
  };
}

/** Trades the authorization `code` (and the PKCE verifier) for tokens. */
export function exchangeCode(settings: CodexSettings, code: string, verifier: string, fetch: GrantFetch = globalThis.fetch, now: () => number = Date.now): Promise<CodexTokens> {
  return grant(settings, { grant_type: "authorization_code", code, redirect_uri: settings.redirect_uri, code_verifier: verifier }, fetch, now);
}

/** New tokens for a refresh token (the old refresh token is kept when none comes back). */
export function refreshTokens(settings: CodexSettings, refreshToken: string, fetch: GrantFetch = globalThis.fetch, now: () => number = Date.now): Promise<CodexTokens> {
  return grant(settings, { grant_type: "refresh_token", refresh_token: refreshToken, scope: "openid profile email" }, fetch, now, refreshToken);
}
