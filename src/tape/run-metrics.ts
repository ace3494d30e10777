/**
 * What one model call's `run` event says about the call: tokens, price and latency. The
 * usage is in OpenAI field names (src/llm/usage.ts); `data.cost` is written by the cost
 * capability (`{ usd: number | null, source }`) and `data.elapsed_ms` by the step record,
 * each only by versions of bub that have them, so both may be missing.
 */
import type { TapeEntry } from "../kernel/tape-contract.ts";
import { isRecord } from "../kernel/guards.ts";

/** The figures of one `run` event. */
export interface RunMetrics {
  readonly model: string | null;
  readonly promptTokens: number | null;
  readonly completionTokens: number | null;
  /** The part of `promptTokens` served from the provider's prompt cache. */
  readonly cachedTokens: number | null;
  /** Null when no price is known (or the tape predates prices). */
  readonly costUsd: number | null;
  /** The call's wall time, when the tape recorded it. */
  readonly elapsedMs: number | null;
  readonly status: string | null;
}

function finite(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** True for an `event` entry named `run` (one model call). */
export function isRunEvent(entry: Pick<TapeEntry, "kind" | "payload">): boolean {
  return entry.kind === "event" && entry.payload.name === "run";
}

/** The figures of a `run` event's data (anything else gives all nulls). */
export function runMetrics(entry: Pick<TapeEntry, "payload">): RunMetrics {
  const data = isRecord(entry.payload.data) ? entry.payload.data : {};
  const usage = isRecord(data.usage) ? data.usage : {};
  const details = isRecord(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
  const cost = isRecord(data.cost) ? data.cost : {};
  return {
    model: typeof data.model === "string" ? data.model : null,
    promptTokens: finite(usage.prompt_tokens),
    completionTokens: finite(usage.completion_tokens),
    cachedTokens: finite(details.cached_tokens) ?? finite(usage.cached_tokens),
    costUsd: finite(cost.usd),
    elapsedMs: finite(data.elapsed_ms),
    status: typeof data.status === "string" ? data.status : null,
  };
}

/** Sums of some `run` events; a sum is null when none of the events had the figure. */
export interface RunTotals {
  readonly modelCalls: number;
  readonly promptTokens: number | null;
  readonly completionTokens: number | null;
  readonly cachedTokens: number | null;
  readonly costUsd: number | null;
  readonly elapsedMs: number | null;
}

function add(sum: number | null, value: number | null): number | null {
  return value === null ? sum : (sum ?? 0) + value;
}

/** The totals of `metrics`. */
export function sumRunMetrics(metrics: readonly RunMetrics[]): RunTotals {
  let promptTokens: number | null = null;
  let completionTokens: number | null = null;
  let cachedTokens: number | null = null;
  let costUsd: number | null = null;
  let elapsedMs: number | null = null;
  for (const each of metrics) {
    promptTokens = add(promptTokens, each.promptTokens);
    completionTokens = add(completionTokens, each.completionTokens);
    cachedTokens = add(cachedTokens, each.cachedTokens);
    costUsd = add(costUsd, each.costUsd);
    elapsedMs = add(elapsedMs, each.elapsedMs);
  }
  return { modelCalls: metrics.length, promptTokens, completionTokens, cachedTokens, costUsd, elapsedMs };
}
