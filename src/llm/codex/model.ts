/**
 * The Codex provider: `openai:<model>` served by the ChatGPT backend's Codex Responses
 * endpoint with a ChatGPT subscription, when no OpenAI API base is configured and either
 * no BUB key is set and `bub login openai` stored a token, or the key is itself a ChatGPT
 * token (a JWT carrying an account id).
 *
 * It is the AI SDK's OpenAI Responses model with its own `fetch`, which adds the sign-in
 * (a fresh bearer token, the `chatgpt-account-id` header and the Codex headers) and trims
 * the request body to what the Codex endpoint takes, with its defaults.
 */
import type { LanguageModelV4 } from "@ai-sdk/provider";
import { BubError } from "../../kernel/errors.ts";
import { parseModelId } from "../model-id.ts";
import { loadProviderModule, type ModelTarget } from "../providers.ts";
import { providerValue, type ModelSettings } from "../settings.ts";
import type { FetchFunction } from "../../http/request-fetch.ts";
import { accountIdOf, readAuthFile, storedTokens } from "./auth-file.ts";
import { authFilePath, withCodexDefaults, type CodexSettings } from "./settings.ts";
import { resolveCodexToken } from "./token.ts";
import { isRecord } from "../../kernel/guards.ts";

/** How a Codex call signs in: the stored OAuth tokens, or a ChatGPT token given as the key. */
export type CodexCredentials = { readonly kind: "oauth"; readonly authFile: string } | { readonly kind: "key"; readonly token: string; readonly accountId: string };

/** A model target served by the Codex endpoint. */
export interface CodexModelTarget extends ModelTarget {
  readonly codex: {
    readonly settings: CodexSettings;
    /** The Codex endpoint's base URL (ends in `/codex`). */
    readonly baseURL: string;
    readonly credentials: CodexCredentials;
  };
}

/** Body keys the Codex endpoint is sent; everything else the SDK adds is dropped. */
const SENT_KEYS = ["model", "input", "tools", "tool_choice", "text", "stream", "parallel_tool_calls", "reasoning", "store", "instructions", "include"];

/** The instructions sent when the request has none. */
export const CODEX_INSTRUCTIONS = "You are Codex.";

/** `https://chatgpt.com/backend-api` → `https://chatgpt.com/backend-api/codex` (a trailing `/responses` dropped). */
export function codexBaseUrl(base: string): string {
  let url = base.trim().replace(/\/+$/, "");
  url = url.replace(/\/responses$/, "").replace(/\/+$/, "");
  return url.endsWith("/codex") ? url : `${url}/codex`;
}

export function isCodexTarget(target: ModelTarget): target is CodexModelTarget {
  return "codex" in target && typeof target.codex === "object";
}

/**
 * The Codex target for `candidate`, or null when it is not served by Codex (another
 * provider, an OpenAI API base or an ordinary key is set, or nobody signed in).
 *
 * @throws BubError `config` when `auth.json` cannot be read.
 */
export async function resolveCodexTarget(candidate: string, settings: ModelSettings, env: NodeJS.ProcessEnv = process.env): Promise<CodexModelTarget | null> {
  const ref = parseModelId(candidate);
  if (ref.provider !== "openai" || providerValue(settings.api_base, "openai")) return null;
  const codexSettings = withCodexDefaults(settings.codex);
  const key = providerValue(settings.api_key, "openai");
  let credentials: CodexCredentials;
  if (key) {
    const accountId = accountIdOf(key);
    if (!accountId) return null;
    credentials = { kind: "key", token: key, accountId };
  } else {
    const authFile = authFilePath(codexSettings, env);
    if (!storedTokens(await readAuthFile(authFile))) return null;
    credentials = { kind: "oauth", authFile };
  }
  return {
    ref,
    family: "openai",
    apiKey: null,
    baseURL: null,
    optionsKey: "openai",
    clientArgs: settings.client_args ?? {},
    codex: { settings: codexSettings, baseURL: codexBaseUrl(codexSettings.base_url), credentials },
  };
}

/**
 * A Responses request body as the Codex endpoint takes it: only {@link SENT_KEYS}, with
 * `store: false`, the {@link CODEX_INSTRUCTIONS}, `include: ["reasoning.encrypted_content"]`
 * and `text.verbosity: "medium"` unless the request sets them. Text that is not a JSON
 * object is returned unchanged.
 */
export function codexRequestBody(text: string): string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return text;
  }
  if (!isRecord(body)) return text;
  const sent: Record<string, unknown> = {};
  for (const key of SENT_KEYS) if (body[key] !== undefined && body[key] !== null) sent[key] = body[key];
  sent.store ??= false;
  sent.instructions ??= CODEX_INSTRUCTIONS;
  sent.include ??= ["reasoning.encrypted_content"];
  const textOptions = isRecord(sent.text) ? sent.text : {};
  sent.text = { ...textOptions, verbosity: textOptions.verbosity ?? "medium" };
  return JSON.stringify(sent);
}

/** The bearer token and account of the next call. */
async function signIn(target: CodexModelTarget, send: FetchFunction): Promise<{ token: string; accountId: string | null }> {
  const { credentials, settings } = target.codex;
  if (credentials.kind === "key") return { token: credentials.token, accountId: credentials.accountId };
  const tokens = await resolveCodexToken({ authFile: credentials.authFile, settings, fetch: send });
  if (!tokens) {
    throw new BubError("config", `The ChatGPT sign-in stored in ${credentials.authFile} has expired and could not be refreshed. Run \`bub login openai\` again.`);
  }
  return { token: tokens.accessToken, accountId: tokens.accountId };
}

/** `fetch` that signs every request in and shapes its body for the Codex endpoint. */
export function codexFetch(target: CodexModelTarget, send: FetchFunction): FetchFunction {
  return async (input, init) => {
    const { token, accountId } = await signIn(target, send);
    const headers = new Headers(init?.headers);
    headers.set("authorization", `Bearer ${token}`);
    if (accountId) headers.set("chatgpt-account-id", accountId);
    headers.set("openai-beta", "responses=experimental");
    headers.set("originator", "bub");
    const body = typeof init?.body === "string" ? codexRequestBody(init.body) : init?.body;
    return send(input, { ...init, headers, body });
  };
}

/** The AI SDK language model of a Codex target (the OpenAI Responses model, see the module comment). */
export async function createCodexLanguageModel(target: CodexModelTarget, fetch?: FetchFunction): Promise<LanguageModelV4> {
  const { createOpenAI } = await loadProviderModule("openai");
  const send = fetch ?? ((input, init) => globalThis.fetch(input, init));
  const headers = target.clientArgs.headers;
  const provider = createOpenAI({
    // The real token is set per request by codexFetch (it may be refreshed between calls).
    apiKey: "",
    baseURL: target.codex.baseURL,
    ...(isRecord(headers) ? { headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, String(value)])) } : {}),
    fetch: codexFetch(target, send),
  });
  return provider.responses(target.ref.model);
}
