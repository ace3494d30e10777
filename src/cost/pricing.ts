/**
 * The price of one model call from its token usage: a per-model override from config.yml
 * first, then what the provider itself reported (OpenRouter's `usage.cost`), then the
 * `@pydantic/genai-prices` catalog. The catalog is imported on the first price asked for,
 * so commands that never price a call never load it. Nothing here makes a request: the
 * catalog's data ships inside the package.
 */
import type { Usage } from "../kernel/stream.ts";
import { isRecord } from "../kernel/guards.ts";
import type { ModelOverride } from "./settings.ts";

/** Where a call's price came from (`unknown`: nowhere, and `usd` is null). */
export type CostSource = "catalog" | "config" | "provider" | "unknown";

/** What the `run` event of a model call carries as `data.cost`. */
export interface CallCost {
  readonly usd: number | null;
  readonly source: CostSource;
}

/** A call whose price nobody knows. */
export const UNKNOWN_COST: CallCost = Object.freeze({ usd: null, source: "unknown" });

/** The catalog functions bub uses (the package's own signatures). */
export interface PriceCatalog {
  calcPrice: typeof import("@pydantic/genai-prices").calcPrice;
}

let catalog: Promise<PriceCatalog> | null = null;

/** The catalog, imported once. */
export function loadPriceCatalog(): Promise<PriceCatalog> {
  catalog ??= import("@pydantic/genai-prices");
  return catalog;
}

/**
 * bub provider ids → the catalog's provider ids. `codex` is the ChatGPT sign-in, which
 * uses `openai:` model ids and is priced as the OpenAI API would bill the same call.
 * Providers not listed here (a self-hosted `local:` server, say) have no catalog price:
 * give them one in `cost.models`.
 */
const CATALOG_PROVIDERS: Readonly<Record<string, string>> = {
  openai: "openai",
  anthropic: "anthropic",
  openrouter: "openrouter",
  gemini: "google",
  google: "google",
  deepseek: "deepseek",
  groq: "groq",
  mistral: "mistral",
  xai: "x-ai",
};

/** Token counts of a call, split the way providers bill them. */
export interface TokenCounts {
  /** All input tokens, cached ones included (OpenAI's `prompt_tokens`). */
  readonly input: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  /** Output tokens; reasoning tokens are part of them, billed at the output price. */
  readonly output: number;
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

/** The billed token counts of a usage record in OpenAI field names (as the tape keeps it). */
export function tokenCounts(usage: Usage): TokenCounts {
  const details = isRecord(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
  return {
    input: count(usage.prompt_tokens),
    cacheRead: count(details.cached_tokens),
    cacheWrite: count(details.cache_write_tokens),
    output: count(usage.completion_tokens),
  };
}

/** Splits `provider:model` (or `provider/model`) at the first separator. */
export function splitModel(model: string): { provider: string; name: string } | null {
  const match = /[:/]/.exec(model);
  if (!match) return null;
  const provider = model.slice(0, match.index).trim().toLowerCase();
  const name = model.slice(match.index + 1).trim();
  return provider && name ? { provider, name } : null;
}

/** The override configured for `model` (matched as written, then case-insensitively). */
export function overrideFor(overrides: Readonly<Record<string, ModelOverride>>, model: string): ModelOverride | null {
  if (Object.hasOwn(overrides, model)) return overrides[model];
  const lower = model.toLowerCase();
  const key = Object.keys(overrides).find((candidate) => candidate.toLowerCase() === lower);
  return key === undefined ? null : overrides[key];
}

/** The price of `tokens` under an override that names input and output prices; null when it does not. */
export function overridePrice(override: ModelOverride | null, tokens: TokenCounts): number | null {
  if (!override || override.input_per_mtok === undefined || override.output_per_mtok === undefined) return null;
  const input = override.input_per_mtok;
  const uncached = Math.max(0, tokens.input - tokens.cacheRead - tokens.cacheWrite);
  const usd =
    uncached * input + tokens.cacheRead * (override.cache_read_per_mtok ?? input) + tokens.cacheWrite * (override.cache_write_per_mtok ?? input) + tokens.output * override.output_per_mtok;
  return usd / 1_000_000;
}

/** What the provider said the call cost (OpenRouter's `usage.cost`, in US dollars), or null. */
export function providerReportedCost(usage: Usage): number | null {
  const cost = usage.cost;
  return typeof cost === "number" && Number.isFinite(cost) && cost >= 0 ? cost : null;
}

/** The catalog's provider id for `model`, or null when bub knows no catalog entry for its provider. */
export function catalogProviderOf(model: string): string | null {
  const ref = splitModel(model);
  return (ref && CATALOG_PROVIDERS[ref.provider]) ?? null;
}

/** The catalog's entry for a model: its price calculation for `tokens`, or null when it has none. */
export function catalogLookup(prices: PriceCatalog, model: string, tokens: TokenCounts, at: Date): ReturnType<PriceCatalog["calcPrice"]> {
  const ref = splitModel(model);
  const providerId = catalogProviderOf(model);
  if (!ref || !providerId) return null;
  const usage = { input_tokens: tokens.input, cache_read_tokens: tokens.cacheRead, cache_write_tokens: tokens.cacheWrite, output_tokens: tokens.output };
  try {
    return prices.calcPrice(usage, ref.name, { providerId, timestamp: at });
  } catch {
    // The catalog throws on usage it cannot split (more cached than input tokens, say): no price.
    return null;
  }
}

/**
 * The price of one call of `model` (`provider:model`) that used `usage`.
 *
 * ```ts
 * await priceCall("openai:gpt-4o-mini", { prompt_tokens: 1000, completion_tokens: 200 }, {});
 * // { usd: 0.00027, source: "catalog" }
 * ```
 */
export async function priceCall(model: string | null, usage: Usage | null, overrides: Readonly<Record<string, ModelOverride>>, at: Date = new Date()): Promise<CallCost> {
  if (!usage || !model) return UNKNOWN_COST;
  const tokens = tokenCounts(usage);
  const configured = overridePrice(overrideFor(overrides, model), tokens);
  if (configured !== null) return { usd: configured, source: "config" };
  const reported = providerReportedCost(usage);
  if (reported !== null) return { usd: reported, source: "provider" };
  // A provider the catalog has no entry for (a local server): no price, and no catalog to load.
  if (catalogProviderOf(model) === null) return UNKNOWN_COST;
  const found = catalogLookup(await loadPriceCatalog(), model, tokens, at);
  return found ? { usd: found.total_price, source: "catalog" } : UNKNOWN_COST;
}

/**
 * The context window of `model` in tokens: the `cost.models` override, else the catalog's
 * (for an OpenRouter id such as `anthropic/claude-sonnet-4` without its own entry, the
 * vendor's entry for the same model), else null.
 */
export async function contextWindowOf(model: string, overrides: Readonly<Record<string, ModelOverride>>): Promise<number | null> {
  const configured = overrideFor(overrides, model)?.context_window;
  if (configured !== undefined) return configured;
  if (catalogProviderOf(model) === null) return null;
  const prices = await loadPriceCatalog();
  const none: TokenCounts = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
  const at = new Date();
  const found = catalogLookup(prices, model, none, at)?.model.context_window;
  if (found !== undefined) return found;
  const ref = splitModel(model);
  const vendor = ref?.provider === "openrouter" ? splitModel(ref.name) : null;
  return (vendor && catalogLookup(prices, `${vendor.provider}:${vendor.name}`, none, at)?.model.context_window) ?? null;
}
