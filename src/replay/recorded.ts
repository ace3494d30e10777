/**
 * A session tape read for a replay: its turns as the person started them (the words they
 * typed, without the channel's context line, and the channel that brought them), what each
 * turn answered, the tool calls it made with their results, and its figures (tokens, price,
 * latency). The same reading serves the original tape and the replay's, so that both sides
 * of the comparison are measured alike.
 */
import type { TapeEntry } from "../kernel/tape-contract.ts";
import { isRecord } from "../kernel/guards.ts";
import { contextFields, splitPromptContext } from "../tape/prompt-context.ts";
import { isRunEvent, runMetrics, sumRunMetrics, type RunMetrics, type RunTotals } from "../tape/run-metrics.ts";
import { buildTranscript, type TranscriptItem, type TranscriptTurn } from "../tape/transcript.ts";
import { contentText } from "../tape/transcript-render.ts";
import { turnIdOf } from "../tape/turns.ts";

/** One tool call of a turn with what it returned (null while no result is on the tape). */
export interface RecordedToolCall {
  readonly callId: string | null;
  /** As the model called it (`fs_read`). */
  readonly name: string;
  /** The arguments as the model wrote them (JSON text). */
  readonly arguments: string;
  readonly result: unknown;
  readonly hasResult: boolean;
}

/** One turn of a session as the replay sees it. */
export interface RecordedTurn {
  /** 1 for the session's first turn. */
  readonly number: number;
  readonly turnId: string | null;
  /** What the person sent, without the context line (a comma command as typed). */
  readonly prompt: string;
  /** The context line's fields (`sender_id`, `channel`, `chat_id`, ...), empty when there was none. */
  readonly context: Readonly<Record<string, string>>;
  /** The turn's last assistant message (empty when it gave none). */
  readonly answer: string;
  readonly toolCalls: readonly RecordedToolCall[];
  /** The models its calls used, in order of first use. */
  readonly models: readonly string[];
  readonly totals: RunTotals;
  /** The turn's latency: the model calls' `elapsed_ms` when each recorded it, else first to last entry. */
  readonly latencyMs: number;
  readonly latencySource: "elapsed_ms" | "timestamps";
  readonly errors: readonly string[];
}

function itemsOf(parts: readonly TranscriptTurn[]): TranscriptItem[] {
  return parts.flatMap((part) => [...part.items]);
}

/** The prompt of a turn: its `command` event's raw line, else its first user message. */
function promptOf(items: readonly TranscriptItem[]): { prompt: string; context: Record<string, string> } {
  for (const item of items) {
    if (item.type === "event" && item.name === "command" && isRecord(item.data) && typeof item.data.raw === "string") return { prompt: item.data.raw, context: {} };
    if (item.type === "message" && item.role === "user") {
      const split = splitPromptContext(contentText(item.content));
      return { prompt: split.text, context: split.context === null ? {} : contextFields(split.context) };
    }
  }
  return { prompt: "", context: {} };
}

function toolCallsOf(items: readonly TranscriptItem[]): RecordedToolCall[] {
  const calls: { callId: string | null; name: string; arguments: string; result: unknown; hasResult: boolean }[] = [];
  for (const item of items) {
    if (item.type === "tool_call") calls.push({ callId: item.callId, name: item.name, arguments: item.arguments, result: null, hasResult: false });
    else if (item.type === "tool_result") {
      const call = calls.find((each) => !each.hasResult && (item.callId === null || each.callId === item.callId));
      if (call) {
        call.result = item.output;
        call.hasResult = true;
      }
    }
  }
  return calls;
}

function millis(date: string): number {
  const parsed = Date.parse(date);
  return Number.isNaN(parsed) ? 0 : parsed;
}

function turnOf(number: number, parts: readonly TranscriptTurn[], runs: readonly RunMetrics[]): RecordedTurn {
  const items = itemsOf(parts);
  const { prompt, context } = promptOf(items);
  const answers = items.filter((item) => item.type === "message" && item.role === "assistant");
  const last = answers.at(-1);
  const totals = sumRunMetrics(runs);
  const timed = runs.length > 0 && runs.every((run) => run.elapsedMs !== null);
  const start = Math.min(...parts.map((part) => millis(part.start)));
  const end = Math.max(...parts.map((part) => millis(part.end)));
  const models: string[] = [];
  for (const run of runs) if (run.model && !models.includes(run.model)) models.push(run.model);
  if (models.length === 0) for (const part of parts) if (part.model && !models.includes(part.model)) models.push(part.model);
  return {
    number,
    turnId: parts[0]?.turnId ?? null,
    prompt,
    context,
    answer: last && last.type === "message" ? contentText(last.content) : "",
    toolCalls: toolCallsOf(items),
    models,
    totals: totals.promptTokens === null && parts.some((part) => part.usage) ? { ...totals, promptTokens: sum(parts, "prompt_tokens"), completionTokens: sum(parts, "completion_tokens") } : totals,
    latencyMs: timed ? (totals.elapsedMs ?? 0) : Math.max(0, end - start),
    latencySource: timed ? "elapsed_ms" : "timestamps",
    errors: items.flatMap((item) => (item.type === "error" ? [`${item.kind}: ${item.message}`] : [])),
  };
}

function sum(parts: readonly TranscriptTurn[], key: "prompt_tokens" | "completion_tokens"): number {
  return parts.reduce((total, part) => total + (part.usage?.[key] ?? 0), 0);
}

/**
 * The turns of a session tape (`entries` oldest first), in order; entries written before the
 * first turn are left out.
 */
export function recordedTurns(entries: readonly TapeEntry[], tape: string): RecordedTurn[] {
  const transcript = buildTranscript(entries, { tape });
  const runsByTurn = new Map<string, RunMetrics[]>();
  for (const entry of entries) {
    const turnId = turnIdOf(entry);
    if (turnId === null || !isRunEvent(entry)) continue;
    runsByTurn.set(turnId, [...(runsByTurn.get(turnId) ?? []), runMetrics(entry)]);
  }
  const parts = new Map<number, TranscriptTurn[]>();
  for (const part of transcript.turns) if (part.number !== null) parts.set(part.number, [...(parts.get(part.number) ?? []), part]);
  return [...parts].map(([number, pieces]) => turnOf(number, pieces, runsByTurn.get(pieces[0]?.turnId ?? "") ?? []));
}

/** The key a tool call is matched by: its name (dots and underscores alike) and its arguments as canonical JSON. */
export function toolCallKey(name: string, args: unknown): string {
  let value = args;
  if (typeof args === "string") {
    try {
      value = JSON.parse(args);
    } catch {
      value = args;
    }
  }
  return `${name.replaceAll(".", "_")}\u0000${canonicalJson(value)}`;
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (isRecord(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * The recorded results of a session's tool calls, by {@link toolCallKey}: a call that matches
 * takes the next unused result of its key, in tape order; once they are used up, it finds none.
 */
export class RecordedResults {
  readonly #queues = new Map<string, unknown[]>();

  constructor(turns: readonly RecordedTurn[]) {
    for (const turn of turns) {
      for (const call of turn.toolCalls) {
        if (!call.hasResult) continue;
        const key = toolCallKey(call.name, call.arguments);
        this.#queues.set(key, [...(this.#queues.get(key) ?? []), call.result]);
      }
    }
  }

  /** The next recorded result for a call of `name` with `args`, or `{ found: false }`. */
  take(name: string, args: unknown): { found: true; result: unknown } | { found: false } {
    const queue = this.#queues.get(toolCallKey(name, args));
    if (!queue || queue.length === 0) return { found: false };
    return { found: true, result: queue.shift() };
  }
}
