/**
 * The session page's context line: how much of the model's context window the session's
 * context (what follows the tape's last anchor) fills, and the share at which bub hands off
 * onto a summary. The figures come from the cost capability (`src/cost/context-budget.ts`),
 * the same ones `,tape.info` prints; this file only words them for the page.
 */
import { contextUsageWithSettings, type ContextUsage } from "../cost/context-budget.ts";
import type { TapeEntry } from "../kernel/tape-contract.ts";
import { formatCount } from "./format.ts";
import { html, type Html } from "./html.ts";

/** Reads a setting by its config.yml path (`cost.models`, `context.budget_share`); undefined when unset. */
export type ConfigValue = (path: string) => unknown;

/** `128k`, `1M`, `200k`, `32,000` for a window that is no round thousand. */
export function shortTokens(tokens: number): string {
  if (tokens >= 1_000_000 && tokens % 1_000_000 === 0) return `${tokens / 1_000_000}M`;
  if (tokens >= 1000 && tokens % 1000 === 0) return `${tokens / 1000}k`;
  if (tokens >= 1024 && tokens % 1024 === 0) return `${tokens / 1024}Ki`;
  return formatCount(tokens);
}

/** `41%`, `0.4%` under one per cent, `<0.1%` for a trace. */
function percent(share: number): string {
  const value = share * 100;
  if (value >= 1) return `${Math.round(value)}%`;
  if (value >= 0.1) return `${value.toFixed(1)}%`;
  return value > 0 ? "<0.1%" : "0%";
}

/**
 * Where the tape's context stands against its model's window, with the settings `config`
 * reads (without it, the catalog's windows and the default hand-off share). Null when no
 * model call is on the tape yet.
 */
export function contextShareOf(entries: readonly TapeEntry[], config: ConfigValue = () => undefined): Promise<ContextUsage | null> {
  return contextUsageWithSettings(entries, config);
}

/**
 * The line's words: `context: 41% of 128k tokens (52,480 tokens of M; hand-off at 80%)`;
 * with an unknown window, the tokens and how to give the window; with no model call, a dash.
 */
export function contextLine(usage: ContextUsage | null): Html {
  if (!usage) return html`context: — <span class="muted">(no model call on this tape yet)</span>`;
  const handOff = `hand-off at ${Math.round(usage.budgetShare * 100)}%`;
  if (usage.window === null || usage.share === null) {
    return html`context: ${formatCount(usage.tokens)} tokens <span class="muted">(the window of ${usage.model} is unknown: set its context_window under cost.models in config.yml)</span>`;
  }
  const over = usage.share >= usage.budgetShare ? html` <span class="badge warn">at the hand-off share</span>` : "";
  return html`context: <strong>${percent(usage.share)}</strong> of ${shortTokens(usage.window)} tokens <span class="muted">(${formatCount(usage.tokens)} tokens of ${usage.model}; ${handOff})</span>${over}`;
}
