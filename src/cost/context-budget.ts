/**
 * The visible context budget: how much of the model's context window the session's context
 * (what follows the tape's last anchor) fills, measured from the last model call's reported
 * usage and estimated, at four characters a token, for what was added since.
 */
import type { TapeEntry } from "../kernel/tape-contract.ts";
import { isRecord } from "../kernel/guards.ts";
import { contextWindowOf } from "./pricing.ts";
import { DEFAULT_CONTEXT_BUDGET_SHARE, type ModelOverride } from "./settings.ts";

/** Characters per token of the estimate for text no model call has counted yet. */
export const CHARS_PER_TOKEN = 4;

/** Where the context stands against the window. */
export interface ContextUsage {
  /** Tokens the next call's context holds (measured plus estimated). */
  readonly tokens: number;
  /** The model whose window it is measured against. */
  readonly model: string;
  /** Its context window; null when neither the catalog nor config.yml knows it. */
  readonly window: number | null;
  /** `tokens / window`; null without a window. */
  readonly share: number | null;
  /** The share past which bub hands off before the next call (`context.budget_share`). */
  readonly budgetShare: number;
}

/** Estimated tokens of `text` (a prompt, a message, a tool result). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

function entryText(entry: TapeEntry): string {
  switch (entry.kind) {
    case "message":
      return typeof entry.payload.content === "string" ? entry.payload.content : JSON.stringify(entry.payload.content ?? "");
    case "tool_call":
      return JSON.stringify(entry.payload.calls ?? []);
    case "tool_result":
      return JSON.stringify(entry.payload.results ?? []);
    case "anchor":
      return JSON.stringify(entry.payload.state ?? {});
    default:
      return "";
  }
}

function tokensOfRun(entry: TapeEntry): number | null {
  const data = entry.payload.data;
  const usage = isRecord(data) && isRecord(data.usage) ? data.usage : null;
  const prompt = usage?.prompt_tokens;
  if (typeof prompt !== "number" || !Number.isFinite(prompt)) return null;
  const completion = typeof usage?.completion_tokens === "number" ? usage.completion_tokens : 0;
  return prompt + completion;
}

/** The entries after the tape's last anchor (all of them when it has none). */
export function sinceLastAnchor(entries: readonly TapeEntry[]): readonly TapeEntry[] {
  const last = entries.findLastIndex((entry) => entry.kind === "anchor");
  return last < 0 ? entries : entries.slice(last);
}

/**
 * Tokens the context of the next call holds: the newest `run` event's prompt and completion
 * tokens (what the provider counted), plus an estimate of what the tape gained after it; with
 * no such event, an estimate of the whole context plus `systemPrompt`. `entries` are the
 * context's (after the last anchor, see {@link sinceLastAnchor}); `extra` is text about to be
 * sent besides them (the new prompt).
 */
export function contextTokens(entries: readonly TapeEntry[], options: { systemPrompt?: string; extra?: string } = {}): number {
  let measured: number | null = null;
  let index = entries.length - 1;
  for (; index >= 0; index--) {
    const entry = entries[index];
    if (entry.kind === "event" && entry.payload.name === "run") {
      measured = tokensOfRun(entry);
      if (measured !== null) break;
    }
  }
  let estimated = estimateTokens(options.extra ?? "");
  for (const entry of entries.slice(index + 1)) estimated += estimateTokens(entryText(entry));
  return measured !== null ? measured + estimated : estimated + estimateTokens(options.systemPrompt ?? "");
}

/** The model of the newest `run` event among `entries`, or null. */
export function lastRunModel(entries: readonly TapeEntry[]): string | null {
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index];
    const data = entry.payload.data;
    if (entry.kind === "event" && entry.payload.name === "run" && isRecord(data) && typeof data.model === "string") return data.model;
  }
  return null;
}

/**
 * Where a tape's context stands: its tokens against the window of `model` (default: the
 * model of the newest call on the tape). This is what `,tape.info` shows and what `bub ui`
 * can show beside a session. Null when the tape names no model and none is given.
 *
 * ```ts
 * const usage = await contextUsageOf(await store.fetchAll({ tape }), { overrides: {}, budgetShare: 0.8 });
 * if (usage?.share != null) console.log(`${Math.round(usage.share * 100)}% of ${usage.window}`);
 * ```
 */
export async function contextUsageOf(
  entries: readonly TapeEntry[],
  options: { model?: string | null; overrides: Readonly<Record<string, ModelOverride>>; budgetShare: number },
): Promise<ContextUsage | null> {
  const model = options.model ?? lastRunModel(entries);
  if (!model) return null;
  const tokens = contextTokens(sinceLastAnchor(entries));
  const window = await contextWindowOf(model, options.overrides);
  return { tokens, model, window, share: window ? tokens / window : null, budgetShare: options.budgetShare };
}

/** `12,345 of 128,000 tokens (9.6%; hand-off at 80%)`, or what is unknown. */
export function formatContextUsage(usage: ContextUsage | null): string {
  if (!usage) return "unknown (no model call on this tape yet)";
  const tokens = usage.tokens.toLocaleString("en-US");
  const budget = `hand-off at ${Math.round(usage.budgetShare * 100)}%`;
  if (usage.window === null || usage.share === null) return `${tokens} tokens; context window of ${usage.model} unknown (set cost.models in config.yml)`;
  return `${tokens} of ${usage.window.toLocaleString("en-US")} tokens (${(usage.share * 100).toFixed(1)}%; ${budget})`;
}

/** The context windows of `cost.models` out of a raw settings value (what `configValue("cost.models")` answers). */
export function contextWindowOverrides(value: unknown): Record<string, ModelOverride> {
  const overrides: Record<string, ModelOverride> = {};
  if (!isRecord(value)) return overrides;
  for (const [model, override] of Object.entries(value)) {
    const window = isRecord(override) ? override.context_window : undefined;
    if (typeof window === "number" && Number.isInteger(window) && window > 0) overrides[model] = { context_window: window };
  }
  return overrides;
}

/**
 * {@link contextUsageOf} with the settings read through `configValue` (a `RuntimeAgent`'s,
 * or `(path) => settings.getValue(path, undefined)`): `cost.models` and `context.budget_share`.
 */
export function contextUsageWithSettings(entries: readonly TapeEntry[], configValue: (path: string) => unknown, model?: string | null): Promise<ContextUsage | null> {
  const share = configValue("context.budget_share");
  return contextUsageOf(entries, {
    model,
    overrides: contextWindowOverrides(configValue("cost.models")),
    budgetShare: typeof share === "number" && share > 0 && share <= 1 ? share : DEFAULT_CONTEXT_BUDGET_SHARE,
  });
}
