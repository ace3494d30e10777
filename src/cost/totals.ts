/**
 * Cost totals read back from tapes: every model call's `run` event carries its price
 * (`data.cost`, see ./pricing.ts); these functions turn the events of one tape or of a whole
 * store into rows and sum them by day, session, model, user or turn.
 */
import type { TapeEntry, TapeStore } from "../kernel/tape-contract.ts";
import { isRecord } from "../kernel/guards.ts";
import { listSessionTapes } from "../tape/session-tapes.ts";
import { tokenCounts } from "./pricing.ts";

/** One model call as the tape recorded it. */
export interface CostRow {
  readonly tape: string;
  /** The session id (null when the store's name index does not know the tape). */
  readonly session: string | null;
  /** UTC ISO date and time of the `run` event. */
  readonly date: string;
  readonly model: string | null;
  /** Null when no price was known. */
  readonly usd: number | null;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly turnId: string | null;
  /** Who sent the turn (see ./user.ts), when its `loop.start` event says. */
  readonly user: string | null;
}

/** A sum of rows. */
export interface CostTotal {
  readonly calls: number;
  /** Calls without a known price (their tokens count, their dollars cannot). */
  readonly unpriced: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly usd: number;
}

/** The ways `bub cost --by` groups rows. */
export const COST_GROUPS = ["day", "session", "model", "user", "turn"] as const;
/** One of {@link COST_GROUPS}. */
export type CostGroup = (typeof COST_GROUPS)[number];

/** The price on a `run` event's data (`data.cost.usd`): a number, or null when unknown or absent. */
export function runCostUsd(data: unknown): number | null {
  const cost = isRecord(data) && isRecord(data.cost) ? data.cost.usd : undefined;
  return typeof cost === "number" && Number.isFinite(cost) ? cost : null;
}

function text(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}

/** The model calls among a tape's entries (oldest first), each with its turn's user. */
export function costRows(tape: string, session: string | null, entries: readonly TapeEntry[]): CostRow[] {
  const users = new Map<string, string>();
  const rows: CostRow[] = [];
  for (const entry of entries) {
    if (entry.kind !== "event") continue;
    const data = entry.payload.data;
    const turnId = text(entry.meta.turn_id);
    if (entry.payload.name === "loop.start") {
      const user = isRecord(data) ? text(data.user) : null;
      if (turnId && user) users.set(turnId, user);
      continue;
    }
    if (entry.payload.name !== "run" || !isRecord(data)) continue;
    const tokens = isRecord(data.usage) ? tokenCounts(data.usage) : null;
    rows.push({
      tape,
      session,
      date: entry.date,
      model: text(data.model),
      usd: runCostUsd(data),
      inputTokens: tokens?.input ?? 0,
      outputTokens: tokens?.output ?? 0,
      turnId,
      user: turnId ? (users.get(turnId) ?? null) : null,
    });
  }
  return rows;
}

/** Adds one row to a total. */
export function addRow(total: CostTotal, row: CostRow): CostTotal {
  return {
    calls: total.calls + 1,
    unpriced: total.unpriced + (row.usd === null ? 1 : 0),
    inputTokens: total.inputTokens + row.inputTokens,
    outputTokens: total.outputTokens + row.outputTokens,
    usd: total.usd + (row.usd ?? 0),
  };
}

/** Nothing spent yet. */
export const EMPTY_TOTAL: CostTotal = Object.freeze({ calls: 0, unpriced: 0, inputTokens: 0, outputTokens: 0, usd: 0 });

/** The sum of `rows`. */
export function sumRows(rows: Iterable<CostRow>): CostTotal {
  let total = EMPTY_TOTAL;
  for (const row of rows) total = addRow(total, row);
  return total;
}

/** The key a row is grouped under (`"?"` when the row does not say). */
export function groupKey(row: CostRow, by: CostGroup): string {
  switch (by) {
    case "day":
      return row.date.slice(0, 10);
    case "session":
      return row.session ?? row.tape;
    case "model":
      return row.model ?? "?";
    case "user":
      return row.user ?? "?";
    case "turn":
      return row.turnId ?? "?";
  }
}

/** Rows summed per group, in the order each group first appears. */
export function groupRows(rows: Iterable<CostRow>, by: CostGroup): Map<string, CostTotal> {
  const groups = new Map<string, CostTotal>();
  for (const row of rows) {
    const key = groupKey(row, by);
    groups.set(key, addRow(groups.get(key) ?? EMPTY_TOTAL, row));
  }
  return groups;
}

/** Every model call of every session tape of `store`, read `concurrency` tapes at a time. */
export async function storeCostRows(store: TapeStore, options: { except?: string; concurrency?: number } = {}): Promise<CostRow[]> {
  const tapes = (await listSessionTapes(store)).filter((tape) => tape.tape !== options.except);
  const rows: CostRow[][] = [];
  let next = 0;
  const worker = async () => {
    while (next < tapes.length) {
      const index = next++;
      const { tape, sessionId } = tapes[index];
      rows[index] = costRows(tape, sessionId, await store.fetchAll({ tape, kinds: ["event"] }));
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 8, tapes.length) }, worker));
  return rows.flat();
}
