/**
 * What the agent loop does about cost (issue 37): prices each model step before it goes on
 * the tape (`data.cost` of its `run` event), refuses a call once a budget is spent, and
 * tells when the next call would pass the context budget. The pricing, totals and budget
 * rules are in src/cost/; this file binds them to one turn.
 */
import type { BubFramework } from "../kernel/framework.ts";
import { BubError } from "../kernel/errors.ts";
import type { TapeEntry } from "../kernel/tape-contract.ts";
import type { TurnState } from "../kernel/types.ts";
import { budgetError, checkBudgets, hasBudget, type BudgetRefusal } from "../cost/budget.ts";
import type { Prompt } from "../kernel/envelope.ts";
import { entries } from "../tape/entry.ts";
import { contextTokens, sinceLastAnchor, type ContextUsage } from "../cost/context-budget.ts";
import { contextWindowOf, priceCall, UNKNOWN_COST, type CallCost } from "../cost/pricing.ts";
import { createLogger } from "../kernel/log.ts";
import { budgetSettings, contextSettings, costSettings, type BudgetSettings, type ContextSettings, type CostSettings } from "../cost/settings.ts";
import { CostLedger, type Spending } from "../cost/ledger.ts";
import { costRows } from "../cost/totals.ts";
import type { StepRecord } from "../llm/step-record.ts";
import type { Tape } from "../tape/tape.ts";

const log = createLogger("bub:cost");

/** A step record with its price, as the tape records it. */
export type PricedStep = StepRecord & { readonly cost: CallCost };

/** The user a turn counts against: the builtin `loadState` sets `state.user` (see src/cost/user.ts), else the session. */
export function stateUser(state: TurnState, sessionId: string): string {
  return state.user || sessionId;
}

/** One turn's view of cost settings and spending. */
export class TurnCosts {
  readonly #tape: Tape;
  readonly #ledger: CostLedger;
  readonly #user: string;
  readonly #cost: CostSettings;
  readonly #budget: BudgetSettings;
  readonly #context: ContextSettings;
  /** Every other session's spending, read once per turn when a user or day budget needs it. */
  #others: Promise<Spending> | null = null;

  private constructor(tape: Tape, ledger: CostLedger, user: string, settings: { cost: CostSettings; budget: BudgetSettings; context: ContextSettings }) {
    this.#tape = tape;
    this.#ledger = ledger;
    this.#user = user;
    this.#cost = settings.cost;
    this.#budget = settings.budget;
    this.#context = settings.context;
  }

  /**
   * The costs of a turn writing `tape` (its fork); `ledger` keeps the other sessions' spending.
   * @throws ConfigError when a `cost:`, `budget:` or `context:` setting is invalid.
   */
  static async open(framework: BubFramework, tape: Tape, ledger: CostLedger, user: string): Promise<TurnCosts> {
    const [cost, budget, context] = await Promise.all([framework.settings.load(costSettings), framework.settings.load(budgetSettings), framework.settings.load(contextSettings)]);
    return new TurnCosts(tape, ledger, user, { cost, budget, context });
  }

  /** `step` with its price. */
  async price(step: StepRecord): Promise<PricedStep> {
    const cost = await this.priceCall(step.model, step.usage);
    this.#ledger.charge(this.#tape.name, this.#user, new Date(), cost.usd);
    return { ...step, cost };
  }

  /** The budget that refuses the next call, or null. */
  async refusal(now = new Date()): Promise<BudgetRefusal | null> {
    if (!hasBudget(this.#budget)) return null;
    const session = costRows(this.#tape.name, null, await this.#tape.search(this.#tape.query().kinds("event")));
    return checkBudgets(this.#budget, {
      session,
      others: () => (this.#others ??= this.#ledger.spending(this.#tape.name)),
      user: this.#user,
      now,
    });
  }

  /**
   * The error that ends the turn when a budget is spent, after writing the refusal to the
   * tape: a `budget.refused` event and, on the turn's first step, the refused prompt (kept
   * out of later context); null when the call may go ahead.
   */
  async refuse(step: number, prompt: Prompt): Promise<BubError | null> {
    const refused = await this.refusal();
    if (!refused) return null;
    if (step === 1) await this.#tape.append(entries.message({ role: "user", content: prompt }, { context: false }));
    await this.#tape.appendEvent("budget.refused", { budget: refused.budget, limit_usd: refused.limitUsd, spent_usd: refused.spentUsd, user: this.#user, step, date: new Date().toISOString() });
    return budgetError(refused);
  }

  /**
   * Where the next call's context would stand, when it would pass the context budget (and
   * the model's window is known); null when it stays within it.
   */
  async overBudget(model: string, systemPrompt: string, prompt: string): Promise<ContextUsage | null> {
    const budgetShare = this.#context.budget_share;
    if (budgetShare >= 1) return null;
    const window = await contextWindowOf(model, this.#cost.models);
    if (window === null) return null;
    const entries = await this.#contextEntries();
    // Nothing to summarise yet (a fresh anchor and a long prompt): the overflow handoff is all that can help.
    if (!entries.some((entry) => entry.kind === "message")) return null;
    const tokens = contextTokens(entries, { systemPrompt, extra: prompt });
    const share = tokens / window;
    return share >= budgetShare ? { tokens, model, window, share, budgetShare } : null;
  }

  /** The entries after the last anchor (the store reads only those); the whole tape when it has no anchor. */
  async #contextEntries(): Promise<readonly TapeEntry[]> {
    try {
      return await this.#tape.store.fetchAll({ tape: this.#tape.name, lastAnchor: true });
    } catch (error) {
      if (!BubError.isInstance(error) || error.kind !== "not_found") throw error;
      return sinceLastAnchor(await this.#tape.search(this.#tape.query()));
    }
  }

  /** The price of a call outside a step (the handoff summary). */
  async priceCall(model: string | null, usage: StepRecord["usage"]): Promise<CallCost> {
    try {
      return await priceCall(model, usage, this.#cost.models);
    } catch (error) {
      // A price is never worth a lost step: the call is recorded as unpriced.
      log.warn(`cost.price.failed model=${model}`, error);
      return UNKNOWN_COST;
    }
  }
}
