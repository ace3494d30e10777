/**
 * The settings schemas of cost tracking (YAML `cost:`, `budget:` and `context:`; env
 * `BUB_COST_*`, `BUB_BUDGET_*`, `BUB_CONTEXT_*`). Imported when a section is first resolved.
 */
import { z } from "zod";

/** A price (US dollars per million tokens) and/or context window for one model, overriding the catalog. */
export const modelOverrideSchema = z.object({
  /** Uncached input tokens. */
  input_per_mtok: z.number().min(0).optional(),
  /** Output tokens (reasoning tokens included, as providers bill them). */
  output_per_mtok: z.number().min(0).optional(),
  /** Input tokens read from the provider's prompt cache; default: the input price. */
  cache_read_per_mtok: z.number().min(0).optional(),
  /** Input tokens written to the provider's prompt cache; default: the input price. */
  cache_write_per_mtok: z.number().min(0).optional(),
  /** The model's context window in tokens. */
  context_window: z.number().int().positive().optional(),
});

/** `cost:` — per-model prices and context windows that replace the catalog's. */
export const costSchema = z.object({
  /** `provider:model` → override. */
  models: z.record(z.string(), modelOverrideSchema).default({}),
});

/** An amount in US dollars; `0` or unset: no budget. */
const usd = () => z.number().min(0).nullable().default(null);

/** `budget:` — spending caps checked before each model call. */
export const budgetSchema = z.object({
  /** Most one session (one chat) may spend in total. */
  session_usd: usd(),
  /** Most one user may spend in total, over every session. */
  user_usd: usd(),
  /** Most everything together may spend in one UTC calendar day. */
  day_usd: usd(),
});

/** `context:` — the visible context budget. */
export const contextSchema = z.object({
  /**
   * Share of the model's context window a call may fill before bub hands off onto a summary
   * first; `1` leaves only the handoff after an overflow.
   */
  budget_share: z.number().gt(0).max(1).default(0.8),
});
