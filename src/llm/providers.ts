/**
 * The provider registry: which AI SDK provider serves a `provider:model` id, with which key
 * and base URL. Provider packages are imported on first use only, so commands that never
 * call a model never load them.
 */
import type { LanguageModelV4 } from "@ai-sdk/provider";
import { BubError } from "../kernel/errors.ts";
import { parseModelId, type ModelRef } from "./model-id.ts";
import { providerValue, type ModelSettings } from "./settings.ts";
import type { FetchFunction } from "../http/request-fetch.ts";
import { alignChatRequestBody } from "./chat-wire.ts";
import { geminiMediaBody, isGeminiProvider } from "./gemini-media.ts";
import { isRecord } from "../kernel/guards.ts";

/** Which AI SDK package talks to a provider. */
export type ProviderFamily = "openrouter" | "openai" | "anthropic" | "openai-compatible";

/** Everything needed to build the language model for one candidate. */
export interface ModelTarget {
  readonly ref: ModelRef;
  readonly family: ProviderFamily;
  readonly apiKey: string | null;
  readonly baseURL: string | null;
  /** Key of this provider's entry in `providerOptions` (camelCase for OpenAI-compatible ids). */
  readonly optionsKey: string;
  /** `client_args` for the provider factory (`headers`, ...). */
  readonly clientArgs: Readonly<Record<string, unknown>>;
}

interface ProviderInfo {
  readonly family: ProviderFamily;
  /** The provider SDK's own key variable, read when no BUB key is configured. */
  readonly keyEnv: string | null;
  /** Whether a key is required when no custom base URL is configured. */
  readonly needsKey: boolean;
  /** Default endpoint for OpenAI-compatible providers. */
  readonly baseURL?: string;
}

const PROVIDERS: Readonly<Record<string, ProviderInfo>> = {
  openrouter: { family: "openrouter", keyEnv: "OPENROUTER_API_KEY", needsKey: true },
  openai: { family: "openai", keyEnv: "OPENAI_API_KEY", needsKey: true },
  anthropic: { family: "anthropic", keyEnv: "ANTHROPIC_API_KEY", needsKey: true },
  // Well-known OpenAI-compatible services: usable without BUB_<PROVIDER>_API_BASE.
  deepseek: { family: "openai-compatible", keyEnv: "DEEPSEEK_API_KEY", needsKey: true, baseURL: "https://api.deepseek.com/v1" },
  gemini: { family: "openai-compatible", keyEnv: "GEMINI_API_KEY", needsKey: true, baseURL: "https://generativelanguage.googleapis.com/v1beta/openai" },
  groq: { family: "openai-compatible", keyEnv: "GROQ_API_KEY", needsKey: true, baseURL: "https://api.groq.com/openai/v1" },
  mistral: { family: "openai-compatible", keyEnv: "MISTRAL_API_KEY", needsKey: true, baseURL: "https://api.mistral.ai/v1" },
  xai: { family: "openai-compatible", keyEnv: "XAI_API_KEY", needsKey: true, baseURL: "https://api.x.ai/v1" },
  ollama: { family: "openai-compatible", keyEnv: null, needsKey: false, baseURL: "http://localhost:11434/v1" },
};

/** Provider ids served without any base URL configuration. */
export const KNOWN_PROVIDERS: readonly string[] = Object.keys(PROVIDERS);

/** `BUB_<PROVIDER>_<SUFFIX>`: the provider-scoped environment variable for a setting. */
export function providerEnvName(provider: string, suffix: "API_KEY" | "API_BASE"): string {
  return `BUB_${provider.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_${suffix}`;
}

/**
 * Decides which provider package, key and base URL serve `modelId`. Pure: nothing is
 * imported and no request is made.
 *
 * ```ts
 * resolveModelTarget("openrouter:openrouter/free", settings).family; // "openrouter"
 * ```
 *
 * @throws BubError `config` for a malformed id, a missing key, or an unknown provider
 *   without a base URL — each naming the variable to set.
 */
export function resolveModelTarget(modelId: string, settings: ModelSettings, env: NodeJS.ProcessEnv = process.env): ModelTarget {
  const ref = parseModelId(modelId);
  const info = PROVIDERS[ref.provider];
  const configuredBase = providerValue(settings.api_base, ref.provider);
  const baseURL = configuredBase ?? info?.baseURL ?? null;
  if (!info && !configuredBase) {
    throw new BubError(
      "config",
      `Unknown provider '${ref.provider}' in model '${ref.id}': set ${providerEnvName(ref.provider, "API_BASE")} (or BUB_API_BASE) to its OpenAI-compatible endpoint, or use one of: ${KNOWN_PROVIDERS.join(", ")}.`,
      { details: { model: ref.id, provider: ref.provider } },
    );
  }
  const family: ProviderFamily = info?.family ?? "openai-compatible";
  const envKey = info?.keyEnv ? env[info.keyEnv] : undefined;
  const apiKey = providerValue(settings.api_key, ref.provider) ?? (envKey ? envKey : null);
  if (!apiKey && info?.needsKey && !configuredBase) {
    throw new BubError(
      "config",
      `No API key for provider '${ref.provider}' — set ${providerEnvName(ref.provider, "API_KEY")} or BUB_API_KEY, or run \`bub onboard\`${ref.provider === "openai" ? " (or `bub login openai` to use a ChatGPT subscription)" : ""}.`,
      { details: { model: ref.id, provider: ref.provider } },
    );
  }
  const optionsKey = family === "openai-compatible" ? ref.provider.replace(/[-_]+(.)/g, (_match, letter: string) => letter.toUpperCase()) : family;
  return { ref, family, apiKey, baseURL, optionsKey, clientArgs: settings.client_args ?? {} };
}

// --- lazy provider packages -------------------------------------------------------------

type OpenRouterModule = typeof import("@openrouter/ai-sdk-provider");
type OpenAIModule = typeof import("@ai-sdk/openai");
type AnthropicModule = typeof import("@ai-sdk/anthropic");
type CompatibleModule = typeof import("@ai-sdk/openai-compatible");

interface ProviderModules {
  openrouter: OpenRouterModule;
  openai: OpenAIModule;
  anthropic: AnthropicModule;
  "openai-compatible": CompatibleModule;
}

/** A package imported on first use, once; a failed import is tried again on the next use. */
class LazyModule<T> {
  readonly #load: () => Promise<T>;
  #pending: Promise<T> | null = null;

  constructor(load: () => Promise<T>) {
    this.#load = load;
  }

  get loaded(): boolean {
    return this.#pending !== null;
  }

  get(): Promise<T> {
    if (this.#pending) return this.#pending;
    const pending = this.#load();
    this.#pending = pending;
    pending.catch(() => {
      if (this.#pending === pending) this.#pending = null;
    });
    return pending;
  }
}

const MODULES: { [F in ProviderFamily]: LazyModule<ProviderModules[F]> } = {
  openrouter: new LazyModule(() => import("@openrouter/ai-sdk-provider")),
  openai: new LazyModule(() => import("@ai-sdk/openai")),
  anthropic: new LazyModule(() => import("@ai-sdk/anthropic")),
  "openai-compatible": new LazyModule(() => import("@ai-sdk/openai-compatible")),
};

const FAMILIES: readonly ProviderFamily[] = ["openrouter", "openai", "anthropic", "openai-compatible"];

/** Imports a provider package once; a failed import is retried on the next call. */
export function loadProviderModule<F extends ProviderFamily>(family: F): Promise<ProviderModules[F]> {
  return MODULES[family].get();
}

/** Provider packages loaded so far (for tests of lazy loading). */
export function loadedProviderFamilies(): ProviderFamily[] {
  return FAMILIES.filter((family) => MODULES[family].loaded);
}

function factoryOptions(target: ModelTarget, fetch: FetchFunction | undefined): Record<string, unknown> {
  const { default_headers: defaultHeaders, headers, ...rest } = target.clientArgs;
  const options: Record<string, unknown> = { ...(fetch ? { fetch } : {}), ...rest };
  const mergedHeaders = { ...(isRecord(defaultHeaders) ? defaultHeaders : {}), ...(isRecord(headers) ? headers : {}) };
  if (Object.keys(mergedHeaders).length > 0) options.headers = mergedHeaders;
  if (target.apiKey) options.apiKey = target.apiKey;
  if (target.baseURL) options.baseURL = target.baseURL.replace(/\/+$/, "");
  return options;
}

/**
 * Builds the AI SDK language model for a target (importing its package on first use).
 * `openai` with a base URL uses the chat-completions model so any OpenAI-compatible
 * server works; without one it uses OpenAI's Responses API. OpenAI-compatible providers
 * align their bodies with the reference's message shape through their `transformRequestBody`
 * option ({@link alignChatRequestBody}); the `openai` and `openrouter` providers, which have
 * no such option, send the SDK's shape (docs/models.md lists the difference).
 *
 * `fetch` is what the provider sends its requests with (the model client passes the global
 * `fetch` bound to its own dispatcher, see ./transport.ts); without it the provider uses the
 * global `fetch` as it is.
 */
export async function createLanguageModel(target: ModelTarget, fetch?: FetchFunction): Promise<LanguageModelV4> {
  const options = factoryOptions(target, fetch);
  switch (target.family) {
    case "openrouter": {
      const { createOpenRouter } = await loadProviderModule("openrouter");
      // As for openai and anthropic: a server of one's own may need no key.
      if (!target.apiKey && target.baseURL) options.apiKey = "";
      return createOpenRouter({ compatibility: "strict", ...options }).chat(target.ref.model);
    }
    case "openai": {
      const { createOpenAI } = await loadProviderModule("openai");
      // An explicit key stops the SDK from reading OPENAI_API_KEY; a custom server may need none.
      if (!target.apiKey && target.baseURL) options.apiKey = "";
      const provider = createOpenAI(options);
      return target.baseURL ? provider.chat(target.ref.model) : provider(target.ref.model);
    }
    case "anthropic": {
      const { createAnthropic } = await loadProviderModule("anthropic");
      if (!target.apiKey && target.baseURL) options.apiKey = "";
      return createAnthropic(options)(target.ref.model);
    }
    case "openai-compatible": {
      const { createOpenAICompatible } = await loadProviderModule("openai-compatible");
      const provider = createOpenAICompatible({
        includeUsage: true,
        // Gemini takes audio and video as `file` parts (./gemini-media.ts).
        transformRequestBody: isGeminiProvider(target.ref.provider) ? (body: Record<string, unknown>) => geminiMediaBody(alignChatRequestBody(body)) : alignChatRequestBody,
        ...options,
        name: target.ref.provider,
        baseURL: String(options.baseURL ?? ""),
      });
      return provider.chatModel(target.ref.model);
    }
  }
}
