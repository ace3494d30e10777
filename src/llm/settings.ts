import type { CodexSettings } from "./codex/settings.ts";

/** The model used when nothing is configured. */
export const DEFAULT_MODEL = "openrouter:openrouter/free";

/** Default `max_tokens` of a model call. */
export const DEFAULT_MAX_TOKENS = 16384;

/**
 * Default most model steps of one turn. The reference runtime has no limit; a model that
 * keeps calling tools would then run until it is killed.
 */
export const DEFAULT_MAX_STEPS = 100;

/**
 * Default seconds one call attempt may take, stream included (10 minutes): a stream that
 * keeps sending but never ends is cut off, however busy it is.
 */
export const DEFAULT_MODEL_TIMEOUT_SECONDS = 600;

/** Default seconds a model response may send nothing before the call fails. */
export const DEFAULT_MODEL_IDLE_TIMEOUT_SECONDS = 120;

/**
 * Model settings as the runtime passes them to the LLM layer (the settings layer maps
 * `BUB_*` environment variables and the YAML config onto this shape).
 */
export interface ModelSettings {
  /** `provider:model`. */
  model: string;
  /** Models tried, in order, when the requested one fails. */
  fallback_models: string[] | null;
  /** One key for every provider, or a provider id → key map. */
  api_key: string | Record<string, string> | null;
  /** One base URL for every provider, or a provider id → base URL map. */
  api_base: string | Record<string, string> | null;
  max_tokens: number;
  /** Whole-call timeout per attempt (default {@link DEFAULT_MODEL_TIMEOUT_SECONDS}); `0` or `null`: none. */
  model_timeout_seconds: number | null;
  /**
   * Seconds a response may send nothing (before its headers, or between two body chunks)
   * before the attempt fails with a `timeout`; `0` or `null`: no limit.
   */
  model_idle_timeout_seconds: number | null;
  /** Passed to the provider factory (e.g. `headers`). */
  client_args: Record<string, unknown>;
  /** Passed to every call (`temperature`, `reasoning_effort`, provider options...). */
  completion_args: Record<string, unknown>;
  /** Most model steps of one turn (default {@link DEFAULT_MAX_STEPS}); `null`: no limit. Used by the agent loop, not by this layer. */
  max_steps: number | null;
  /** The ChatGPT sign-in's endpoints and folder (the `codex` section); unset: OpenAI's (./codex/settings.ts). */
  codex?: Partial<CodexSettings> | null;
}

/** Settings with every default applied, overridden by `overrides`. */
export function defaultModelSettings(overrides: Partial<ModelSettings> = {}): ModelSettings {
  return {
    model: DEFAULT_MODEL,
    fallback_models: null,
    api_key: null,
    api_base: null,
    max_tokens: DEFAULT_MAX_TOKENS,
    model_timeout_seconds: DEFAULT_MODEL_TIMEOUT_SECONDS,
    model_idle_timeout_seconds: DEFAULT_MODEL_IDLE_TIMEOUT_SECONDS,
    client_args: {},
    completion_args: {},
    max_steps: DEFAULT_MAX_STEPS,
    ...overrides,
  };
}

/** A string setting, or the entry for `provider` in a provider → value map. */
export function providerValue(value: string | Record<string, string> | null | undefined, provider: string): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return value === "" ? null : value;
  const found = value[provider] ?? value[provider.toLowerCase()];
  return typeof found === "string" && found !== "" ? found : null;
}
