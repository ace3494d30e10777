/**
 * The comparison `bub replay` prints: per turn, the original and the replay side by side
 * (answers as a word diff, tool calls, tokens, price, latency), and the totals. The word
 * diff is jsdiff's (`diffWords`). The report's JSON form is what `--json` prints.
 */
import { diffWords } from "diff";
import type { ReplayCallRecord, ReplayCallSource } from "./plugin.ts";
import type { RecordedTurn } from "./recorded.ts";

/** One piece of a word diff: kept, only in the original, or only in the replay. */
export interface DiffPart {
  readonly op: "equal" | "removed" | "added";
  readonly text: string;
}

/** A tool call on one side; `source` only on the replay side. */
export interface SideToolCall {
  readonly name: string;
  readonly arguments: string;
  readonly source?: ReplayCallSource;
}

/** One side of a turn. */
export interface TurnSide {
  readonly answer: string;
  readonly models: readonly string[];
  readonly toolCalls: readonly SideToolCall[];
  readonly modelCalls: number;
  readonly promptTokens: number | null;
  readonly completionTokens: number | null;
  /** Null when no price is known for the turn's calls. */
  readonly costUsd: number | null;
  readonly latencyMs: number;
  readonly latencySource: "elapsed_ms" | "timestamps";
  readonly errors: readonly string[];
}

/** One turn of the comparison; a side is null when that tape has no such turn. */
export interface TurnComparison {
  readonly number: number;
  readonly prompt: string;
  readonly original: TurnSide | null;
  readonly replay: TurnSide | null;
  /** True when both answers are the same text. */
  readonly sameAnswer: boolean;
  readonly diff: readonly DiffPart[];
}

/** Sums over one side's turns; a sum is null when no turn had the figure. */
export interface SideTotals {
  readonly turns: number;
  readonly modelCalls: number;
  readonly toolCalls: number;
  readonly reusedToolCalls: number;
  readonly promptTokens: number | null;
  readonly completionTokens: number | null;
  readonly costUsd: number | null;
  readonly latencyMs: number;
}

/** Where each side's tape is. */
export interface ReplayTapes {
  readonly original: { readonly sessionId: string; readonly tape: string };
  readonly replay: { readonly sessionId: string; readonly tape: string; readonly model: string | null; readonly plugins: readonly string[]; readonly live: boolean; readonly scratch: string | null };
}

/** The whole comparison. */
export interface ReplayReport extends ReplayTapes {
  readonly turns: readonly TurnComparison[];
  readonly totals: { readonly original: SideTotals; readonly replay: SideTotals };
}

/** The word diff of two answers. */
export function answerDiff(original: string, replay: string): DiffPart[] {
  return diffWords(original, replay).map((part) => ({ op: part.added ? "added" : part.removed ? "removed" : "equal", text: part.value }));
}

function side(turn: RecordedTurn, sources: ReadonlyMap<string, ReplayCallSource> | null): TurnSide {
  return {
    answer: turn.answer,
    models: turn.models,
    toolCalls: turn.toolCalls.map((call) => ({
      name: call.name,
      arguments: call.arguments,
      ...(sources ? { source: (call.callId !== null ? sources.get(call.callId) : undefined) ?? "run" } : {}),
    })),
    modelCalls: turn.totals.modelCalls,
    promptTokens: turn.totals.promptTokens,
    completionTokens: turn.totals.completionTokens,
    costUsd: turn.totals.costUsd,
    latencyMs: turn.latencyMs,
    latencySource: turn.latencySource,
    errors: turn.errors,
  };
}

function plus(sum: number | null, value: number | null): number | null {
  return value === null ? sum : (sum ?? 0) + value;
}

function totalsOf(sides: readonly (TurnSide | null)[]): SideTotals {
  let promptTokens: number | null = null;
  let completionTokens: number | null = null;
  let costUsd: number | null = null;
  let turns = 0;
  let modelCalls = 0;
  let toolCalls = 0;
  let reusedToolCalls = 0;
  let latencyMs = 0;
  for (const each of sides) {
    if (!each) continue;
    turns++;
    modelCalls += each.modelCalls;
    toolCalls += each.toolCalls.length;
    reusedToolCalls += each.toolCalls.filter((call) => call.source === "reused").length;
    promptTokens = plus(promptTokens, each.promptTokens);
    completionTokens = plus(completionTokens, each.completionTokens);
    costUsd = plus(costUsd, each.costUsd);
    latencyMs += each.latencyMs;
  }
  return { turns, modelCalls, toolCalls, reusedToolCalls, promptTokens, completionTokens, costUsd, latencyMs };
}

/**
 * Compares the original's turns with the replay's, turn by turn in order; `calls` is the
 * replay plugin's log, which says which of the replay's tool calls were reused.
 */
export function compareTurns(original: readonly RecordedTurn[], replay: readonly RecordedTurn[], calls: readonly ReplayCallRecord[], tapes: ReplayTapes): ReplayReport {
  const sources = new Map<string, ReplayCallSource>();
  for (const call of calls) if (call.callId !== null) sources.set(call.callId, call.source);
  const turns: TurnComparison[] = [];
  for (let index = 0; index < Math.max(original.length, replay.length); index++) {
    const before = original[index];
    const after = replay[index];
    const left = before ? side(before, null) : null;
    const right = after ? side(after, sources) : null;
    const a = left?.answer ?? "";
    const b = right?.answer ?? "";
    turns.push({ number: index + 1, prompt: before?.prompt ?? after?.prompt ?? "", original: left, replay: right, sameAnswer: a === b, diff: answerDiff(a, b) });
  }
  return { ...tapes, turns, totals: { original: totalsOf(turns.map((turn) => turn.original)), replay: totalsOf(turns.map((turn) => turn.replay)) } };
}
