/**
 * Signing in with a ChatGPT subscription (OpenAI's Codex OAuth, PKCE S256 and a random
 * state), the two ways: the browser comes back to a one-shot local callback server, or
 * (manual) the user pastes the callback URL or the code. The tokens are saved to
 * `auth.json`.
 */
import { createInterface } from "node:readline/promises";
import type { Readable } from "node:stream";
import { saveTokens, type CodexTokens } from "../llm/codex/auth-file.ts";
import { authorizeUrl, createPkce, exchangeCode, randomState, type GrantFetch } from "../llm/codex/oauth.ts";
import type { CodexSettings } from "../llm/codex/settings.ts";
import { describeError } from "../kernel/errors.ts";
import { LoginError, checkCallback, parseCallbackInput, startCallbackServer } from "./callback.ts";

/** What {@link loginWithCodex} needs. */
export interface CodexLoginOptions {
  readonly settings: CodexSettings;
  readonly authFile: string;
  /** `browser`: open it and wait on the local callback; `manual`: print the URL and read the answer from `input`. */
  readonly mode: "browser" | "manual";
  /** How long to wait for the sign-in. */
  readonly timeoutSeconds: number;
  /** Opens the URL in a browser (injected so tests play the browser). */
  readonly openBrowser: (url: string) => Promise<void>;
  readonly input: Readable;
  /** Where the URL and the prompts are written. */
  readonly output: { write(text: string): unknown };
  readonly fetch?: GrantFetch;
  readonly now?: () => number;
}

function withTimeout<T>(work: Promise<T>, seconds: number, cleanup: () => unknown): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new LoginError(`no sign-in within ${seconds} s (raise --timeout)`)), seconds * 1000);
  });
  return Promise.race([work, timeout]).finally(() => {
    clearTimeout(timer);
    cleanup();
  });
}

/** The code from the browser, through the local callback server. */
async function codeFromBrowser(options: CodexLoginOptions, url: string, state: string): Promise<string> {
  const server = await startCallbackServer(options.settings.redirect_uri, state);
  try {
    options.output.write(`Opening the browser to sign in with your ChatGPT account. If it does not open, visit:\n${url}\n`);
    await options.openBrowser(url).catch((error: unknown) => {
      options.output.write(`(the browser could not be opened: ${describeError(error)}; open the URL above yourself)\n`);
    });
    return await withTimeout(server.code, options.timeoutSeconds, () => undefined);
  } finally {
    await server.close();
  }
}

/** The code from what the user pastes. */
async function codeFromInput(options: CodexLoginOptions, url: string, state: string): Promise<string> {
  options.output.write(`Open this URL in a browser and sign in with your ChatGPT account:\n${url}\n\n`);
  // The reader gets no output stream: the prompt goes through `options.output` like every other line.
  const reader = createInterface({ input: options.input, terminal: false });
  const ended = new Promise<never>((_resolve, reject) => reader.once("close", () => reject(new LoginError("no callback URL or code was entered"))));
  ended.catch(() => undefined);
  try {
    options.output.write("Paste the URL the browser was sent to (or just the code): ");
    const line = await withTimeout(
      Promise.race([reader.question(""), ended]),
      options.timeoutSeconds,
      () => undefined,
    );
    return checkCallback(parseCallbackInput(line), state);
  } finally {
    reader.close();
  }
}

/**
 * Runs the sign-in and stores its tokens in `options.authFile` (other keys kept, mode 0600).
 *
 * @throws LoginError for a refused, mismatched, incomplete or timed-out sign-in; the
 *   token endpoint's errors (`BubError`) as they are.
 */
export async function loginWithCodex(options: CodexLoginOptions): Promise<CodexTokens> {
  const pkce = createPkce();
  const state = randomState();
  const url = authorizeUrl(options.settings, pkce, state);
  const code = options.mode === "browser" ? await codeFromBrowser(options, url, state) : await codeFromInput(options, url, state);
  const tokens = await exchangeCode(options.settings, code, pkce.verifier, options.fetch, options.now);
  await saveTokens(options.authFile, tokens, (options.now ?? Date.now)());
  return tokens;
}
