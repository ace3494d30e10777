/** `bub cost`: what the recorded model calls cost, summed by day, session, model, user or turn. */
import { BubError } from "../../kernel/errors.ts";
import type { BubFramework } from "../../kernel/framework.ts";
import { formatUsd } from "../../cost/budget.ts";
import { COST_GROUPS, groupRows, storeCostRows, sumRows, type CostGroup, type CostRow, type CostTotal } from "../../cost/totals.ts";
import { findSessionTape } from "../../tape/session-tapes.ts";
import { groupDigits } from "../../tape/transcript-render.ts";
import { withTapeStore } from "./tape-store.ts";

/** Options of `bub cost`, as commander parses them. */
export interface CostOptions {
  readonly session?: string;
  readonly since?: string;
  readonly by?: string;
  readonly json?: boolean;
}

/** One group of the report (also its `--json` shape). */
export interface CostReportRow {
  readonly key: string;
  readonly calls: number;
  /** Calls with no known price: counted in tokens, not in dollars. */
  readonly unpriced_calls: number;
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly usd: number;
}

/** The whole report. */
export interface CostReport {
  readonly by: CostGroup;
  readonly since: string | null;
  readonly session: string | null;
  readonly groups: CostReportRow[];
  readonly total: CostReportRow;
}

/** The group `--by` names (`chat` is a session: bub keeps one session per chat). */
export function costGroupOf(value: string | undefined): CostGroup {
  const by = value === undefined ? "day" : value === "chat" ? "session" : value;
  const found = COST_GROUPS.find((group) => group === by);
  if (!found) throw new BubError("invalid_input", `--by ${value} is not a grouping — use one of: ${COST_GROUPS.join(", ")}, chat`);
  return found;
}

/** The start `--since` names: an ISO date or date and time, or `<n>d` (that many days ago, from midnight UTC). */
export function sinceDate(value: string, now = new Date()): string {
  const days = /^(\d+)d$/.exec(value.trim());
  if (days) {
    const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - Number(days[1])));
    return start.toISOString();
  }
  const parsed = Date.parse(value);
  if (!/^\d{4}-\d\d-\d\d/.test(value.trim()) || Number.isNaN(parsed)) {
    throw new BubError("invalid_input", `--since ${value} is not a date — give an ISO date such as 2026-12-01, or a number of days such as 7d`);
  }
  return new Date(parsed).toISOString();
}

function reportRow(key: string, total: CostTotal): CostReportRow {
  return { key, calls: total.calls, unpriced_calls: total.unpriced, input_tokens: total.inputTokens, output_tokens: total.outputTokens, usd: total.usd };
}

/** The report over `rows` (already filtered by session). */
export function buildCostReport(rows: readonly CostRow[], options: { by: CostGroup; since: string | null; session: string | null }): CostReport {
  const since = options.since;
  const kept = since === null ? rows : rows.filter((row) => Date.parse(row.date) >= Date.parse(since));
  const ordered = [...kept].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
  const groups = [...groupRows(ordered, options.by)].map(([key, total]) => reportRow(key, total));
  return { by: options.by, since, session: options.session, groups, total: reportRow("total", sumRows(ordered)) };
}

/** The report as an aligned table with a total line, and a note about calls without a price. */
export function formatCostReport(report: CostReport): string {
  if (report.total.calls === 0) return "No model calls recorded yet (or none in the range asked for).\n";
  const header = [report.by.toUpperCase(), "CALLS", "INPUT", "OUTPUT", "USD"];
  const cells = [...report.groups, { ...report.total, key: "TOTAL" }].map((row) => [
    row.key,
    groupDigits(row.calls),
    groupDigits(row.input_tokens),
    groupDigits(row.output_tokens),
    row.unpriced_calls === row.calls ? "—" : `${formatUsd(row.usd)}${row.unpriced_calls > 0 ? "+" : ""}`,
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((cell) => cell[column].length)));
  const line = (cell: readonly string[]) => cell.map((text, column) => (column === 0 ? text.padEnd(widths[column]) : text.padStart(widths[column]))).join("  ");
  const lines = [header, ...cells].map(line);
  const unpriced = report.total.unpriced_calls;
  if (unpriced > 0) {
    lines.push(`${groupDigits(unpriced)} call${unpriced === 1 ? " has" : "s have"} no known price (— or + above): give the model a price under cost.models in config.yml (docs/cost.md).`);
  }
  return `${lines.join("\n")}\n`;
}

/** Reads every tape of the configured store and writes the report to `out`. */
export async function runCostReport(framework: BubFramework, options: CostOptions, out: { write(text: string): unknown }): Promise<void> {
  const by = costGroupOf(options.by);
  const since = options.since === undefined ? null : sinceDate(options.since);
  const report = await withTapeStore(framework, async (store) => {
    let rows = await storeCostRows(store);
    if (options.session !== undefined) {
      const { tape } = await findSessionTape(store, options.session, framework.workspace);
      rows = rows.filter((row) => row.tape === tape);
    }
    return buildCostReport(rows, { by, since, session: options.session ?? null });
  });
  out.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : formatCostReport(report));
}
