/**
 * Spending per user and per day over a whole store, kept between turns. Reading every tape is
 * the only way to know what all sessions spent, and it takes seconds over thousands of tapes
 * (docs/benchmarks.md), so the sums are read at most every {@link LEDGER_MAX_AGE_MS}; in
 * between, the calls this process priced are added as they happen. A gateway's own spending
 * therefore counts at once, another process's within that time.
 */
import type { TapeStore } from "../kernel/tape-contract.ts";
import { storeCostRows, type CostRow } from "./totals.ts";

/** How old the store's sums may get before a budget check reads every tape again. */
export const LEDGER_MAX_AGE_MS = 30_000;

/** Spending summed over many tapes. */
export interface Spending {
  byUser(user: string): number;
  byDay(day: string): number;
}

/** One priced call: its tape, user, UTC day and price. */
interface Charge {
  readonly tape: string;
  readonly user: string | null;
  readonly day: string;
  readonly usd: number;
}

function chargeOf(row: CostRow): Charge | null {
  return row.usd === null ? null : { tape: row.tape, user: row.user, day: row.date.slice(0, 10), usd: row.usd };
}

/** The spending of `charges`, leaving out the tape `except`. */
export function spendingOf(charges: readonly Charge[], except: string): Spending {
  const byUser = new Map<string, number>();
  const byDay = new Map<string, number>();
  for (const charge of charges) {
    if (charge.tape === except) continue;
    if (charge.user !== null) byUser.set(charge.user, (byUser.get(charge.user) ?? 0) + charge.usd);
    byDay.set(charge.day, (byDay.get(charge.day) ?? 0) + charge.usd);
  }
  return { byUser: (user) => byUser.get(user) ?? 0, byDay: (day) => byDay.get(day) ?? 0 };
}

/** Per-user and per-day spending of a store's tapes. */
export class CostLedger {
  readonly #store: TapeStore;
  readonly #now: () => number;
  #read: { at: number; charges: Promise<Charge[]> } | null = null;
  /** Calls priced by this process since the last read. */
  #recent: Charge[] = [];

  constructor(store: TapeStore, options: { now?: () => number } = {}) {
    this.#store = store;
    this.#now = options.now ?? Date.now;
  }

  /** A call this process priced (added until the next read of the store finds it on its tape). */
  charge(tape: string, user: string | null, date: Date, usd: number | null): void {
    if (usd !== null && usd > 0) this.#recent.push({ tape, user, day: date.toISOString().slice(0, 10), usd });
  }

  /** The spending of every session tape but `except` (the running turn's, counted from its fork). */
  async spending(except: string): Promise<Spending> {
    const now = this.#now();
    if (!this.#read || now - this.#read.at >= LEDGER_MAX_AGE_MS) {
      const charges = storeCostRows(this.#store).then((rows) => rows.map(chargeOf).filter((charge) => charge !== null));
      this.#read = { at: now, charges };
      this.#recent = [];
      charges.catch(() => {
        if (this.#read?.charges === charges) this.#read = null;
      });
    }
    return spendingOf([...(await this.#read.charges), ...this.#recent], except);
  }
}

/** One {@link CostLedger} per tape store, made on first use (the agent keeps one of these). */
export class CostLedgers {
  readonly #ledgers = new WeakMap<TapeStore, CostLedger>();

  /** The ledger of `store`. */
  of(store: TapeStore): CostLedger {
    let ledger = this.#ledgers.get(store);
    if (!ledger) this.#ledgers.set(store, (ledger = new CostLedger(store)));
    return ledger;
  }
}
