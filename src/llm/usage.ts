import type { Usage } from "../kernel/stream.ts";
import { isRecord } from "../kernel/guards.ts";

/** The AI SDK's provider-level usage shape (`LanguageModelV4Usage`). */
export interface ProviderUsage {
  inputTokens: { total?: number; noCache?: number; cacheRead?: number; cacheWrite?: number };
  outputTokens: { total?: number; text?: number; reasoning?: number };
  raw?: unknown;
}

function finite(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/**
 * Usage in OpenAI field names (`prompt_tokens`, `completion_tokens`, `total_tokens`,
 * `prompt_tokens_details.cached_tokens`, `completion_tokens_details.reasoning_tokens`).
 *
 * When the provider itself answered in OpenAI's shape (OpenAI chat, OpenRouter and other
 * OpenAI-compatible servers) its raw object is kept as is, so provider extras such as
 * `cost` survive; otherwise (Anthropic, OpenAI Responses) the AI SDK's normalized counts
 * are mapped. Returns null when the provider reported nothing.
 */
export function normalizeUsage(usage: ProviderUsage | null | undefined): Usage | null {
  if (!usage) return null;
  const raw = usage.raw;
  if (isRecord(raw) && (finite(raw.prompt_tokens) !== undefined || finite(raw.completion_tokens) !== undefined)) {
    const result: Usage = { ...structuredClone(raw) };
    const prompt = finite(raw.prompt_tokens) ?? 0;
    const completion = finite(raw.completion_tokens) ?? 0;
    if (finite(raw.total_tokens) === undefined) result.total_tokens = prompt + completion;
    return result;
  }
  const prompt = finite(usage.inputTokens?.total);
  const completion = finite(usage.outputTokens?.total);
  if (prompt === undefined && completion === undefined) return null;
  const result: Usage = {
    prompt_tokens: prompt ?? 0,
    completion_tokens: completion ?? 0,
    total_tokens: (prompt ?? 0) + (completion ?? 0),
  };
  const cached = finite(usage.inputTokens?.cacheRead);
  const cacheWrite = finite(usage.inputTokens?.cacheWrite);
  if (cached !== undefined || cacheWrite !== undefined) {
    result.prompt_tokens_details = { cached_tokens: cached ?? 0 };
    if (cacheWrite !== undefined) result.prompt_tokens_details.cache_write_tokens = cacheWrite;
  }
  const reasoning = finite(usage.outputTokens?.reasoning);
  if (reasoning !== undefined) result.completion_tokens_details = { reasoning_tokens: reasoning };
  return result;
}
