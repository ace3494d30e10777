/**
 * What `bub login openai`, `bub login status` and `bub logout openai` do, with their
 * output. Nothing printed here contains a token.
 */
import type { Readable } from "node:stream";
import { readAuthFile, removeTokens, storedTokens, isoSeconds } from "../llm/codex/auth-file.ts";
import type { GrantFetch } from "../llm/codex/oauth.ts";
import { authFilePath, type CodexSettings } from "../llm/codex/settings.ts";
import { describeError } from "../kernel/errors.ts";
import { openBrowser } from "./browser.ts";
import { loginWithCodex } from "./flow.ts";

interface Out {
  write(text: string): unknown;
}

/** Options of {@link runLogin}. */
export interface LoginRunOptions {
  readonly settings: CodexSettings;
  readonly env: NodeJS.ProcessEnv;
  readonly manual: boolean;
  readonly browser: boolean;
  readonly timeoutSeconds: number;
  readonly stdin: Readable;
  readonly stdout: Out;
  readonly stderr: Out;
  /** Default: `$BROWSER` or the platform's opener. */
  readonly openBrowser?: (url: string) => Promise<void>;
  readonly fetch?: GrantFetch;
}

/** `bub login openai`: signs in and prints the result. Returns the exit code (1 when the sign-in failed). */
export async function runLogin(options: LoginRunOptions): Promise<number> {
  const authFile = authFilePath(options.settings, options.env);
  try {
    const tokens = await loginWithCodex({
      settings: options.settings,
      authFile,
      mode: options.manual || !options.browser ? "manual" : "browser",
      timeoutSeconds: options.timeoutSeconds,
      openBrowser: options.openBrowser ?? ((url) => openBrowser(url, options.env)),
      input: options.stdin,
      output: options.stdout,
      fetch: options.fetch,
    });
    options.stdout.write(
      [
        "login: ok",
        `account_id: ${tokens.accountId ?? "-"}`,
        `auth_file: ${authFile}`,
        "usage: set BUB_MODEL=openai:<codex-model> and omit BUB_API_KEY",
        "",
      ].join("\n"),
    );
    return 0;
  } catch (error) {
    const message = describeError(error).replace(/^\[[a-z_]+\] /, "").replace(/\.$/, "");
    options.stderr.write(`bub: Codex login failed: ${message} — run \`bub login openai\` again${options.manual || !options.browser ? "" : " (or with --manual)"}\n`);
    return 1;
  }
}

/** `bub login status`: whether a ChatGPT sign-in is stored. Returns 0 when one is, 1 when not. */
export async function printLoginStatus(settings: CodexSettings, env: NodeJS.ProcessEnv, out: Out, now: number = Date.now()): Promise<number> {
  const authFile = authFilePath(settings, env);
  const tokens = storedTokens(await readAuthFile(authFile), now);
  if (!tokens) {
    out.write(`openai: not signed in (run \`bub login openai\`)\nauth_file: ${authFile}\n`);
    return 1;
  }
  const state = tokens.expiresAt > now ? "signed in" : tokens.refreshToken ? "signed in (the access token has expired; it is refreshed on the next call)" : "expired (run `bub login openai`)";
  out.write(`openai: ${state}\naccount_id: ${tokens.accountId ?? "-"}\nexpires_at: ${isoSeconds(tokens.expiresAt)}\nauth_file: ${authFile}\n`);
  return 0;
}

/** `bub logout openai`: forgets the stored sign-in (other keys of the file stay). */
export async function runLogout(settings: CodexSettings, env: NodeJS.ProcessEnv, out: Out): Promise<number> {
  const authFile = authFilePath(settings, env);
  const had = await removeTokens(authFile);
  out.write(had ? `logout: ok\nauth_file: ${authFile}\n` : `logout: not signed in\nauth_file: ${authFile}\n`);
  return 0;
}
