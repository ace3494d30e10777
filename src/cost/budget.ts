/**
 * Spending caps: before a model call, what the session, the user and the day have spent
 * (summed from the `run` events of the tapes, see ./totals.ts) is compared with the
 * `budget:` settings; a budget already spent refuses the call.
 */
import { BubError } from "../kernel/errors.ts";
import type { BudgetSettings } from "./settings.ts";
import type { Spending } from "./ledger.ts";
import type { CostRow } from "./totals.ts";

/** The budgets bub knows. */
export type BudgetName = "session" | "user" | "day";

/** A budget that refuses the next model call. */
export interface BudgetRefusal {
  readonly budget: BudgetName;
  readonly limitUsd: number;
  readonly spentUsd: number;
  /** The one line the channel shows (`bub run` prints it on stderr as `bub: …`). */
  readonly message: string;
}

/** What a budget is checked against. */
export interface BudgetScope {
  /** The session's model calls (the running turn's included). */
  readonly session: readonly CostRow[];
  /** What every other session spent (see ./ledger.ts); only asked when a user or day budget is set. */
  readonly others: () => Promise<Spending>;
  /** Who sent the turn (see ./user.ts). */
  readonly user: string;
  /** Now; the day budget counts the UTC calendar day of it. */
  readonly now: Date;
}

const SETTING: Record<BudgetName, string> = {
  session: "BUB_BUDGET_SESSION_USD (budget.session_usd in config.yml)",
  user: "BUB_BUDGET_USER_USD (budget.user_usd in config.yml)",
  day: "BUB_BUDGET_DAY_USD (budget.day_usd in config.yml)",
};

const WHAT: Record<BudgetName, string> = {
  session: "this session",
  user: "you",
  day: "today (UTC)",
};

/** `$0.0123`: dollars with four decimals below $1, two above. */
export function formatUsd(usd: number): string {
  return usd < 1 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

function spent(rows: Iterable<CostRow>, keep: (row: CostRow) => boolean): number {
  let total = 0;
  for (const row of rows) if (row.usd !== null && keep(row)) total += row.usd;
  return total;
}

function limitOf(value: number | null): number | null {
  return value !== null && value > 0 ? value : null;
}

/** Whether any budget is set. */
export function hasBudget(settings: BudgetSettings): boolean {
  return limitOf(settings.session_usd) !== null || limitOf(settings.user_usd) !== null || limitOf(settings.day_usd) !== null;
}

function refusal(budget: BudgetName, limitUsd: number, spentUsd: number): BudgetRefusal {
  const message = `The ${budget} budget of ${formatUsd(limitUsd)} is spent: ${WHAT[budget]} spent ${formatUsd(spentUsd)}, so no more model calls. Raise ${SETTING[budget]} to go on.`;
  return { budget, limitUsd, spentUsd, message };
}

/**
 * The first budget already spent (session, then user, then day), or null when the call may
 * go ahead. Calls without a known price count as free.
 *
 * ```ts
 * const refused = await checkBudgets({ session_usd: 1, user_usd: null, day_usd: null }, scope);
 * if (refused) throw budgetError(refused);
 * ```
 */
export async function checkBudgets(settings: BudgetSettings, scope: BudgetScope): Promise<BudgetRefusal | null> {
  const session = limitOf(settings.session_usd);
  if (session !== null) {
    const used = spent(scope.session, () => true);
    if (used >= session) return refusal("session", session, used);
  }
  const user = limitOf(settings.user_usd);
  const day = limitOf(settings.day_usd);
  if (user === null && day === null) return null;
  const others = await scope.others();
  if (user !== null) {
    const used = spent(scope.session, (row) => row.user === scope.user) + others.byUser(scope.user);
    if (used >= user) return refusal("user", user, used);
  }
  if (day !== null) {
    const today = scope.now.toISOString().slice(0, 10);
    const used = spent(scope.session, (row) => row.date.slice(0, 10) === today) + others.byDay(today);
    if (used >= day) return refusal("day", day, used);
  }
  return null;
}

/** The error a refused turn ends with (kind `config`: a setting stops it). */
export function budgetError(refused: BudgetRefusal): BubError {
  return new BubError("config", refused.message, { details: { budget: refused.budget, limit_usd: refused.limitUsd, spent_usd: refused.spentUsd } });
}
