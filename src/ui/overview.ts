/**
 * The overview page's figures, read through the store contract from every session tape:
 * tokens and cost per day (from the `run` events: `data.usage`, and `data.cost.usd` where
 * the cost recorder priced the call), and the slowest turns (numbered as `bub tape show`
 * numbers them). Reading every tape is linear in their entries; the page reads them afresh
 * on each visit.
 */
import type { TapeEntry, TapeStore } from "../kernel/tape-contract.ts";
import { isRecord } from "../kernel/guards.ts";
import { buildTranscript } from "../tape/transcript.ts";
import { contentText } from "../tape/transcript-render.ts";
import { splitPrompt } from "./message.ts";
import { sessionStats } from "./sessions.ts";
import { runCostUsd } from "./turns.ts";

/** One day's model calls (days in UTC, `2026-05-01`). */
export interface DayTotals {
  readonly day: string;
  tokens: number;
  /** The known prices summed; null when no call of the day had one. */
  usd: number | null;
  calls: number;
  priced: number;
}

/** A turn among the slowest. */
export interface SlowTurn {
  readonly tape: string;
  /** The turn's number on its tape (Turn 1, 2, …). */
  readonly number: number;
  readonly durationMs: number;
  /** Id of the turn's first entry shown, to link to it. */
  readonly firstId: number;
  readonly start: string;
  /** The start of the user's words, on one line. */
  readonly prompt: string;
  readonly modelCalls: number;
  readonly toolCalls: number;
}

/** What the overview page shows. */
export interface Overview {
  readonly sessions: number;
  /** Oldest first. */
  readonly days: readonly DayTotals[];
  /** Slowest first. */
  readonly slowest: readonly SlowTurn[];
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

function runTokens(entry: TapeEntry): number {
  const data = isRecord(entry.payload.data) ? entry.payload.data : {};
  const usage = isRecord(data.usage) ? data.usage : null;
  if (!usage) return 0;
  const prompt = count(usage.prompt_tokens ?? usage.input_tokens);
  const completion = count(usage.completion_tokens ?? usage.output_tokens);
  return count(usage.total_tokens) || prompt + completion;
}

function oneLine(text: string, max = 90): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Adds one tape's figures to `days` and `turns`. */
function addTape(tape: string, entries: readonly TapeEntry[], days: Map<string, DayTotals>, turns: SlowTurn[]): void {
  for (const entry of entries) {
    if (entry.kind !== "event" || entry.payload.name !== "run") continue;
    const day = entry.date.slice(0, 10);
    const totals = days.get(day) ?? { day, tokens: 0, usd: null, calls: 0, priced: 0 };
    days.set(day, totals);
    totals.calls++;
    totals.tokens += runTokens(entry);
    const usd = runCostUsd(entry);
    if (usd !== null) {
      totals.priced++;
      totals.usd = (totals.usd ?? 0) + usd;
    }
  }
  for (const turn of buildTranscript(entries, { tape }).turns) {
    const first = turn.items[0];
    if (turn.number === null || turn.continued || first === undefined) continue;
    const asked = turn.items.find((item) => item.type === "message" && item.role === "user");
    const prompt = asked?.type === "message" ? splitPrompt(contentText(asked.content)).words : "";
    turns.push({ tape, number: turn.number, durationMs: turn.durationMs, firstId: first.id, start: turn.start, prompt: oneLine(prompt), modelCalls: turn.modelCalls, toolCalls: turn.toolCalls });
  }
}

/**
 * The overview of every session tape in `store`: days with model calls, and the `slowest`
 * turns (default 10).
 */
export async function readOverview(store: TapeStore, slowest = 10): Promise<Overview> {
  const tapes = (await sessionStats(store)).map((stats) => stats.tape);
  const days = new Map<string, DayTotals>();
  const turns: SlowTurn[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tapes.length) {
      const tape = tapes[next++];
      addTape(tape, await store.fetchAll({ tape }), days, turns);
    }
  };
  await Promise.all(Array.from({ length: Math.min(4, tapes.length) }, worker));
  return {
    sessions: tapes.length,
    days: [...days.values()].sort((a, b) => a.day.localeCompare(b.day)),
    slowest: turns.sort((a, b) => b.durationMs - a.durationMs || a.tape.localeCompare(b.tape) || a.number - b.number).slice(0, slowest),
  };
}
