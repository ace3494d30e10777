/**
 * A {@link ReplayReport} for people (two columns per turn, the answers as a word diff in
 * git's plain word-diff notation: `[-only in the original-]{+only in the replay+}`) and for
 * scripts (`--json`: snake_case keys, as `bub tape show --json`).
 */
import type { DiffPart, ReplayReport, SideTotals, TurnComparison, TurnSide } from "./compare.ts";

/** What a missing figure prints as. */
const NONE = "—";
const LABEL = 14;
const CELL = 38;
/** The right column is the last on its line: it may run longer. */
const LAST_CELL = 60;

function cut(text: string, width: number): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length <= width ? line : `${line.slice(0, width - 1)}…`;
}

function row(label: string, left: string, right: string): string {
  return `  ${label.padEnd(LABEL)} ${cut(left, CELL).padEnd(CELL)}  ${cut(right, LAST_CELL)}`.trimEnd();
}

/** A price in dollars, or "—" when unknown. */
export function formatUsd(usd: number | null): string {
  if (usd === null) return NONE;
  return usd === 0 ? "$0" : usd < 0.01 ? `$${usd.toPrecision(2)}` : `$${usd.toFixed(2)}`;
}

function tokens(prompt: number | null, completion: number | null): string {
  return prompt === null && completion === null ? NONE : `${prompt ?? 0} in / ${completion ?? 0} out`;
}

function latency(ms: number, source?: string): string {
  const text = ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
  return source === "timestamps" ? `${text} (from entry times)` : text;
}

function callText(call: TurnSide["toolCalls"][number]): string {
  const args = call.arguments === "{}" ? "" : ` ${call.arguments}`;
  return `${call.source ? `[${call.source}] ` : ""}${call.name}${args}`;
}

/** An answer diff in plain word-diff notation. */
export function plainWordDiff(parts: readonly DiffPart[]): string {
  return parts.map((part) => (part.op === "equal" ? part.text : part.op === "removed" ? `[-${part.text}-]` : `{+${part.text}+}`)).join("");
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `    ${line}`.trimEnd())
    .join("\n");
}

function renderTurn(turn: TurnComparison): string {
  const left = turn.original;
  const right = turn.replay;
  const lines = [`Turn ${turn.number} · ${cut(turn.prompt, 72)}`, row("", "original", "replay")];
  const pick = (each: TurnSide | null, format: (value: TurnSide) => string) => (each ? format(each) : "(no such turn)");
  lines.push(row("model", pick(left, (value) => value.models.join(", ") || NONE), pick(right, (value) => value.models.join(", ") || NONE)));
  lines.push(row("tokens", pick(left, (value) => tokens(value.promptTokens, value.completionTokens)), pick(right, (value) => tokens(value.promptTokens, value.completionTokens))));
  lines.push(row("cost", pick(left, (value) => formatUsd(value.costUsd)), pick(right, (value) => formatUsd(value.costUsd))));
  lines.push(row("latency", pick(left, (value) => latency(value.latencyMs, value.latencySource)), pick(right, (value) => latency(value.latencyMs, value.latencySource))));
  const calls = Math.max(left?.toolCalls.length ?? 0, right?.toolCalls.length ?? 0);
  if (calls === 0) lines.push(row("tool calls", NONE, NONE));
  for (let index = 0; index < calls; index++) {
    const a = left?.toolCalls[index];
    const b = right?.toolCalls[index];
    const missing = index === 0 ? NONE : "";
    lines.push(row(index === 0 ? "tool calls" : "", a ? callText(a) : missing, b ? callText(b) : missing));
  }
  for (const error of right?.errors ?? []) lines.push(row("error", "", error));
  if (turn.sameAnswer) lines.push("  answer (the same on both sides)", indent(left?.answer || "(none)"));
  else lines.push("  answer ([-original-] {+replay+})", indent(plainWordDiff(turn.diff)));
  return lines.join("\n");
}

function renderTotals(report: ReplayReport): string {
  const a: SideTotals = report.totals.original;
  const b: SideTotals = report.totals.replay;
  const same = report.turns.filter((turn) => turn.sameAnswer).length;
  return [
    `Totals · ${report.turns.length} turns, ${same} with the same answer`,
    row("", "original", "replay"),
    row("model calls", String(a.modelCalls), String(b.modelCalls)),
    row("tool calls", String(a.toolCalls), `${b.toolCalls} (${b.reusedToolCalls} reused)`),
    row("tokens", tokens(a.promptTokens, a.completionTokens), tokens(b.promptTokens, b.completionTokens)),
    row("cost", formatUsd(a.costUsd), formatUsd(b.costUsd)),
    row("latency", latency(a.latencyMs), latency(b.latencyMs)),
  ].join("\n");
}

/** The report as text: a header, each turn, the totals. */
export function renderReplayText(report: ReplayReport): string {
  const what = [report.replay.model ? `model ${report.replay.model}` : "the configured model", ...(report.replay.plugins.length > 0 ? [`plugins ${report.replay.plugins.join(", ")}`] : [])].join(", ");
  const header = [
    `Replay of ${report.original.sessionId} (tape ${report.original.tape})`,
    `  replay session ${report.replay.sessionId} (tape ${report.replay.tape}) with ${what}`,
    `  tool calls: recorded results reused when name and arguments match; bash and web.fetch ${report.replay.live ? "run (--live)" : "off"}`,
  ];
  return `${[header.join("\n"), ...report.turns.map(renderTurn), renderTotals(report)].join("\n\n")}\n`;
}

function sideJson(each: TurnSide | null): Record<string, unknown> | null {
  if (!each) return null;
  return {
    answer: each.answer,
    models: each.models,
    model_calls: each.modelCalls,
    tool_calls: each.toolCalls.map((call) => ({ name: call.name, arguments: call.arguments, ...(call.source ? { source: call.source } : {}) })),
    prompt_tokens: each.promptTokens,
    completion_tokens: each.completionTokens,
    cost_usd: each.costUsd,
    latency_ms: each.latencyMs,
    latency_source: each.latencySource,
    errors: each.errors,
  };
}

function totalsJson(totals: SideTotals): Record<string, unknown> {
  return {
    turns: totals.turns,
    model_calls: totals.modelCalls,
    tool_calls: totals.toolCalls,
    reused_tool_calls: totals.reusedToolCalls,
    prompt_tokens: totals.promptTokens,
    completion_tokens: totals.completionTokens,
    cost_usd: totals.costUsd,
    latency_ms: totals.latencyMs,
  };
}

/** The `--json` form of the report. */
export function replayJson(report: ReplayReport): Record<string, unknown> {
  return {
    original: { session_id: report.original.sessionId, tape: report.original.tape },
    replay: { session_id: report.replay.sessionId, tape: report.replay.tape, model: report.replay.model, plugins: report.replay.plugins, live: report.replay.live, scratch: report.replay.scratch },
    turns: report.turns.map((turn) => ({
      number: turn.number,
      prompt: turn.prompt,
      same_answer: turn.sameAnswer,
      diff: turn.diff,
      original: sideJson(turn.original),
      replay: sideJson(turn.replay),
    })),
    totals: { original: totalsJson(report.totals.original), replay: totalsJson(report.totals.replay) },
  };
}
