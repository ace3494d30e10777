/**
 * A tape read as a transcript: turns (see `turns.ts`), each with its anchors, messages, tool
 * calls paired with their results, errors and notable events, and what the turn cost (model
 * calls, tokens, time). `bub tape show` and `bub tape export --format markdown` render it;
 * `bub tape show --json` prints it as it is.
 */
import { BubError } from "../kernel/errors.ts";
import type { TapeEntry } from "../kernel/tape-contract.ts";
import { turnIdOf, TurnTracker } from "./turns.ts";
import { isRecord } from "../kernel/guards.ts";

/** One thing that happened in a turn, in tape order. `id` and `date` are the entry's. */
export type TranscriptItem =
  | { readonly type: "anchor"; readonly id: number; readonly date: string; readonly name: string; readonly state: Record<string, unknown> | null }
  | {
      readonly type: "message";
      readonly id: number;
      readonly date: string;
      readonly role: string;
      /** Text, or the message's content parts. */
      readonly content: unknown;
      /** True for an answer cut short by a failed stream. */
      readonly incomplete?: boolean;
    }
  | { readonly type: "system"; readonly id: number; readonly date: string; readonly content: string }
  | {
      readonly type: "tool_call";
      readonly id: number;
      readonly date: string;
      /** The model's id for the call. */
      readonly callId: string | null;
      readonly name: string;
      /** The arguments as the model wrote them (JSON text). */
      readonly arguments: string;
    }
  | { readonly type: "tool_result"; readonly id: number; readonly date: string; readonly callId: string | null; readonly name: string | null; readonly output: unknown }
  | { readonly type: "error"; readonly id: number; readonly date: string; readonly kind: string; readonly message: string }
  | { readonly type: "event"; readonly id: number; readonly date: string; readonly name: string; readonly data: unknown };

/** Tokens summed over a turn's model calls. */
export interface TranscriptUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
}

/** One turn (or, with `number` null, the entries written before the first turn). */
export interface TranscriptTurn {
  /** 1 for the tape's first turn; null for entries before any turn. */
  readonly number: number | null;
  readonly turnId: string | null;
  readonly start: string;
  readonly end: string;
  /** From the turn's first entry to its last. */
  readonly durationMs: number;
  /** The model of the turn's last model call. */
  readonly model: string | null;
  /** `run` events: one per model call. */
  readonly modelCalls: number;
  readonly toolCalls: number;
  /** Null when no model call reported usage. */
  readonly usage: TranscriptUsage | null;
  /** True when the entries reached the tape apart from the rest of the turn (listed again, "continued"). */
  readonly continued: boolean;
  readonly items: readonly TranscriptItem[];
}

/** A whole tape as turns. */
export interface Transcript {
  readonly tape: string;
  readonly sessionId: string | null;
  readonly workspace: string | null;
  readonly entries: number;
  /** Turns on the whole tape (also when only some are shown). */
  readonly turnCount: number;
  /** The turns shown, in tape order (a turn whose entries reached the tape in two parts is listed twice). */
  readonly turns: readonly TranscriptTurn[];
}

/** Events folded into a turn's figures (or duplicates of another item), not listed. */
const QUIET_EVENTS = new Set(["loop.start", "loop.step.start", "loop.step", "run", "handoff"]);

type JsonRecord = Record<string, unknown>;

function record(value: unknown): JsonRecord | null {
  return isRecord(value) ? value : null;
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

function millis(date: string): number {
  const parsed = Date.parse(date);
  return Number.isNaN(parsed) ? 0 : parsed;
}

interface OpenTurn {
  number: number | null;
  turnId: string | null;
  continued: boolean;
  /** Never empty: a turn opens with its first entry. */
  entries: [TapeEntry, ...TapeEntry[]];
}

/** The `{id, name}` of each call in a `tool_call` entry. */
function callsOf(entry: TapeEntry): { callId: string | null; name: string; arguments: string }[] {
  const calls = Array.isArray(entry.payload.calls) ? entry.payload.calls : [];
  return calls.map((call) => {
    const value = record(call) ?? {};
    const fn = record(value.function) ?? {};
    const args = fn.arguments;
    return {
      callId: typeof value.id === "string" && value.id !== "" ? value.id : null,
      name: typeof fn.name === "string" ? fn.name : "(unnamed)",
      arguments: typeof args === "string" ? args : JSON.stringify(args ?? {}),
    };
  });
}

function buildTurn(open: OpenTurn): TranscriptTurn {
  const items: TranscriptItem[] = [];
  let model: string | null = null;
  let modelCalls = 0;
  let toolCalls = 0;
  let usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null = null;
  let lastCalls: ReturnType<typeof callsOf> = [];
  for (const entry of open.entries) {
    const { id, date, payload } = entry;
    switch (entry.kind) {
      case "anchor":
        items.push({ type: "anchor", id, date, name: String(payload.name ?? ""), state: record(payload.state) });
        break;
      case "message":
        items.push({
          type: "message",
          id,
          date,
          role: String(payload.role ?? "unknown"),
          content: payload.content ?? null,
          ...(entry.meta.incomplete === true ? { incomplete: true } : {}),
        });
        break;
      case "system":
        items.push({ type: "system", id, date, content: String(payload.content ?? "") });
        break;
      case "tool_call":
        // Text said beside the calls ("Let me look.") reads as the assistant's message before them.
        if (typeof payload.content === "string" && payload.content !== "") items.push({ type: "message", id, date, role: "assistant", content: payload.content });
        lastCalls = callsOf(entry);
        toolCalls += lastCalls.length;
        for (const call of lastCalls) items.push({ type: "tool_call", id, date, ...call });
        break;
      case "tool_result": {
        const results = Array.isArray(payload.results) ? payload.results : [];
        const ids = Array.isArray(entry.meta.tool_call_ids) ? entry.meta.tool_call_ids : null;
        results.forEach((output, index) => {
          const fromMeta = ids?.[index];
          const callId = typeof fromMeta === "string" && fromMeta !== "" ? fromMeta : (lastCalls[index]?.callId ?? null);
          const call = lastCalls.find((each) => callId !== null && each.callId === callId) ?? lastCalls[index];
          items.push({ type: "tool_result", id, date, callId, name: call?.name ?? null, output });
        });
        break;
      }
      case "error":
        items.push({ type: "error", id, date, kind: String(payload.kind ?? "unknown"), message: String(payload.message ?? "") });
        break;
      case "event": {
        const name = String(payload.name ?? "");
        const data = record(payload.data);
        if (name === "run") {
          modelCalls++;
          if (typeof data?.model === "string") model = data.model;
          const used = record(data?.usage);
          if (used) {
            usage ??= { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
            usage.prompt_tokens += count(used.prompt_tokens);
            usage.completion_tokens += count(used.completion_tokens);
            usage.total_tokens += count(used.total_tokens) || count(used.prompt_tokens) + count(used.completion_tokens);
          }
        } else if (name === "loop.start" && model === null && typeof data?.model === "string") {
          model = data.model;
        }
        if (!QUIET_EVENTS.has(name)) items.push({ type: "event", id, date, name, data: payload.data ?? null });
        break;
      }
      default:
        items.push({ type: "event", id, date, name: entry.kind, data: payload });
    }
  }
  const start = open.entries[0].date;
  const end = open.entries[open.entries.length - 1].date;
  return {
    number: open.number,
    turnId: open.turnId,
    start,
    end,
    durationMs: Math.max(0, millis(end) - millis(start)),
    model,
    modelCalls,
    toolCalls,
    usage,
    continued: open.continued,
    items,
  };
}

/**
 * The transcript of a whole tape (`entries` oldest first). With `sinceAnchor`, only what
 * follows the last anchor of that name (of any name, with `true`; everything when the tape
 * has none) is kept, the anchor included; turns keep their numbers on the whole tape.
 * @throws BubError `not_found` when `sinceAnchor` names an anchor the tape does not have.
 *
 * ```ts
 * const transcript = buildTranscript(await store.fetchAll({ tape }), { tape });
 * transcript.turns.at(-1)?.usage?.total_tokens;
 * ```
 */
export function buildTranscript(
  entries: readonly TapeEntry[],
  options: { tape: string; sessionId?: string | null; workspace?: string | null; sinceAnchor?: string | true },
): Transcript {
  const tracker = new TurnTracker();
  const numbers = new Map<string, number>();
  const open: OpenTurn[] = [];
  let turns = 0;
  let current: OpenTurn | null = null;
  for (const entry of entries) {
    const change = tracker.next(entry);
    if (change !== null || current === null) {
      const turnId = turnIdOf(entry);
      let number: number | null = null;
      if (change === "new") {
        number = ++turns;
        if (turnId !== null) numbers.set(turnId, number);
      } else if (change === "resumed" && turnId !== null) number = numbers.get(turnId) ?? null;
      current = { number, turnId: change === null ? null : turnId, continued: change === "resumed", entries: [entry] };
      open.push(current);
    } else current.entries.push(entry);
  }
  let parts = open.map(buildTurn);
  if (options.sinceAnchor !== undefined) {
    const wanted = options.sinceAnchor;
    const anchor = entries.findLast((entry) => entry.kind === "anchor" && (wanted === true || entry.payload.name === wanted));
    if (!anchor && wanted !== true) throw new BubError("not_found", `Anchor ${JSON.stringify(wanted)} was not found on tape ${options.tape} — check the name (\`bub tape show\` lists the anchors)`);
    const from = anchor?.id ?? 0;
    parts = parts
      .map((part) => (part.items.length > 0 && part.items[0].id >= from ? part : { ...part, items: part.items.filter((item) => item.id >= from) }))
      .filter((part) => part.items.length > 0);
  }
  return {
    tape: options.tape,
    sessionId: options.sessionId ?? null,
    workspace: options.workspace ?? null,
    entries: entries.at(-1)?.id ?? 0,
    turnCount: turns,
    turns: parts,
  };
}
