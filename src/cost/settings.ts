/** The cost, budget and context-budget settings sections; zod loads only when one is first resolved. */
import { defineSettings, type SettingsOf } from "../config/settings.ts";
import type { budgetSchema, contextSchema, costSchema, modelOverrideSchema } from "./schema.ts";

/** Resolved `cost:` settings. */
export type CostSettings = SettingsOf<typeof costSchema>;
/** Resolved `budget:` settings. */
export type BudgetSettings = SettingsOf<typeof budgetSchema>;
/** Resolved `context:` settings. */
export type ContextSettings = SettingsOf<typeof contextSchema>;
/** One model's price and context window override. */
export type ModelOverride = SettingsOf<typeof modelOverrideSchema>;

/** `cost.models` in config.yml, `BUB_COST_MODELS` (JSON) in the environment. */
export const costSettings = defineSettings<typeof costSchema>({
  id: "cost",
  section: "cost",
  schema: async () => (await import("./schema.ts")).costSchema,
});

/** `budget.session_usd`, `budget.user_usd`, `budget.day_usd`; `BUB_BUDGET_SESSION_USD` and so on. */
export const budgetSettings = defineSettings<typeof budgetSchema>({
  id: "budget",
  section: "budget",
  schema: async () => (await import("./schema.ts")).budgetSchema,
});

/** `context.budget_share`; `BUB_CONTEXT_BUDGET_SHARE`. */
export const contextSettings = defineSettings<typeof contextSchema>({
  id: "context",
  section: "context",
  schema: async () => (await import("./schema.ts")).contextSchema,
});

/** The default share of the context window a call may fill before the handoff. */
export const DEFAULT_CONTEXT_BUDGET_SHARE = 0.8;
