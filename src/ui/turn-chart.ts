/**
 * A turn's model calls and tool calls as bars on a time axis. Each model step writes its
 * entries in one batch when it ends, its `run` event last; the event carries the call's wall
 * time (`elapsed_ms`) and each tool call's (`tool_elapsed_ms`, the tools of a step run side
 * by side, after the model call). A step's span is therefore placed backwards from the
 * event's date. Tapes written before those fields existed get spans from the entry dates:
 * a model call from the end of the step before it, and tool calls drawn as thin marks.
 */
import type { TapeEntry } from "../kernel/tape-contract.ts";
import { isRecord } from "../kernel/guards.ts";
import { html, type Html } from "./html.ts";
import { formatDuration } from "./format.ts";

/** One bar. Times are epoch milliseconds. */
export interface TurnSpan {
  readonly kind: "model" | "tool";
  readonly label: string;
  readonly start: number;
  readonly end: number;
  /** False when the span was guessed from entry dates (no recorded wall time). */
  readonly measured: boolean;
}

function millis(date: string): number | null {
  const parsed = Date.parse(date);
  return Number.isFinite(parsed) ? parsed : null;
}

function number(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null;
}

function callNames(entry: TapeEntry): string[] {
  const calls = Array.isArray(entry.payload.calls) ? entry.payload.calls : [];
  return calls.map((call) => {
    const fn = isRecord(call) && isRecord(call.function) ? call.function : {};
    return typeof fn.name === "string" ? fn.name : "tool";
  });
}

/** The model and tool call spans of a turn's entries (oldest first). */
export function turnSpans(entries: readonly TapeEntry[]): TurnSpan[] {
  const spans: TurnSpan[] = [];
  const first = entries[0] ? millis(entries[0].date) : null;
  if (first === null) return spans;
  let stepStart = first;
  let pendingCalls: string[] = [];
  for (const entry of entries) {
    if (entry.kind === "tool_call") pendingCalls = callNames(entry);
    if (entry.kind !== "event" || entry.payload.name !== "run") continue;
    const end = millis(entry.date);
    if (end === null) continue;
    const data = isRecord(entry.payload.data) ? entry.payload.data : {};
    const model = typeof data.model === "string" ? data.model : "model";
    const elapsed = number(data.elapsed_ms);
    const toolMs = Array.isArray(data.tool_elapsed_ms) ? data.tool_elapsed_ms.map(number) : [];
    const toolsSpan = Math.max(0, ...toolMs.map((ms) => ms ?? 0));
    const modelEnd = end - toolsSpan;
    const modelStart = elapsed !== null ? modelEnd - elapsed : Math.min(stepStart, modelEnd);
    spans.push({ kind: "model", label: model, start: modelStart, end: modelEnd, measured: elapsed !== null });
    pendingCalls.forEach((name, index) => {
      const ms = toolMs[index] ?? null;
      spans.push({ kind: "tool", label: name, start: modelEnd, end: modelEnd + (ms ?? 0), measured: ms !== null });
    });
    pendingCalls = [];
    stepStart = end;
  }
  return spans;
}

/** Bars are drawn in a 1000-unit wide box stretched to the row's width. */
const WIDTH = 1000;

/** The turn's spans as a small chart, or nothing when the turn made no model call. */
export function turnChart(entries: readonly TapeEntry[], label: string): Html | null {
  const spans = turnSpans(entries);
  if (spans.length === 0) return null;
  const dates = entries.map((entry) => millis(entry.date)).filter((value) => value !== null);
  const origin = Math.min(...dates, ...spans.map((span) => span.start));
  const finish = Math.max(...dates, ...spans.map((span) => span.end));
  const total = Math.max(1, finish - origin);
  const rows = spans.map((span) => {
    const x = ((span.start - origin) / total) * WIDTH;
    // A bar is at least a few units wide, so an instant call is still visible.
    const width = Math.max(4, ((span.end - span.start) / total) * WIDTH);
    const took = span.measured ? formatDuration(span.end - span.start) : "time not recorded";
    const at = formatDuration(span.start - origin);
    return html`<li class="span ${span.kind}"><span class="span-label"><span class="badge">${span.kind}</span> <code>${span.label}</code> <span class="muted">${took}</span></span><svg class="span-track" viewBox="0 0 ${WIDTH} 10" preserveAspectRatio="none" role="img" aria-label="${span.kind} ${span.label}: from ${at}, ${took}"><rect class="bar ${span.kind}" x="${x.toFixed(1)}" y="0" width="${Math.min(width, WIDTH - x).toFixed(1)}" height="10"></rect></svg></li>`;
  });
  return html`<figure class="turn-chart" aria-label="${label}: model and tool calls over time"><ol>${rows}</ol><div class="span-axis muted"><span>0 s</span><span>${formatDuration(total)}</span></div></figure>`;
}
