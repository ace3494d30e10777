/**
 * A tape read as a timeline: anchors are section breaks and the entries between them are
 * grouped into turns, which begin where `bub tape list` counts them (`src/tape/turns.ts`);
 * entries before any turn form a block of their own.
 */
import type { TapeEntry } from "../kernel/tape-contract.ts";
import { isLegacyTurnStart, turnIdOf, TurnTracker } from "../tape/turns.ts";
import { isRecord } from "../kernel/guards.ts";

/** Token counts summed over a turn's model calls (`run` events). */
export interface TurnUsage {
  prompt: number;
  completion: number;
  total: number;
}

/** The entries of one turn (or the part of it between two anchors). */
export interface TurnBlock {
  readonly type: "turn";
  /** Id of the first entry. */
  readonly from: number;
  readonly entries: TapeEntry[];
  /**
   * `turn`: where a turn begins; `continued`: more of a turn shown before (after an anchor,
   * or when its entries reached the tape in two parts); `entries`: entries outside any turn,
   * or before the page's first turn start.
   */
  readonly title: "turn" | "continued" | "entries";
}

/** An anchor: a section break. */
export interface AnchorBlock {
  readonly type: "anchor";
  readonly from: number;
  readonly entry: TapeEntry;
  /** The `handoff` event written with the anchor, if it follows it. */
  handoff: TapeEntry | null;
}

/** One item of a timeline. */
export type TimelineBlock = TurnBlock | AnchorBlock;

function eventName(entry: TapeEntry): unknown {
  return entry.kind === "event" ? entry.payload.name : undefined;
}

/**
 * The entries (oldest first) as anchors and turns. Turns begin where `bub tape list` counts
 * them (see {@link TurnTracker}): a new `meta.turn_id`, else a `loop.start` or `command` event.
 */
export function groupTimeline(entries: readonly TapeEntry[]): TimelineBlock[] {
  const blocks: TimelineBlock[] = [];
  const tracker = new TurnTracker();
  let current: TurnBlock | null = null;
  // A turn that opened on an anchor (a first turn writes `session/start`) begins with the block after it.
  let opened = false;
  for (const entry of entries) {
    const change = tracker.next(entry);
    if (entry.kind === "anchor") {
      blocks.push({ type: "anchor", from: entry.id, entry, handoff: null });
      current = null;
      opened = change === "new";
      continue;
    }
    const previous = blocks.at(-1);
    if (current === null && previous?.type === "anchor" && previous.handoff === null && eventName(entry) === "handoff") {
      previous.handoff = entry;
      opened ||= change === "new";
      continue;
    }
    if (current === null || change !== null) {
      const title = change === "new" || (opened && change === null) ? "turn" : change === "resumed" || turnIdOf(entry) !== null ? "continued" : "entries";
      current = { type: "turn", from: entry.id, entries: [], title };
      blocks.push(current);
      opened = false;
    }
    current.entries.push(entry);
  }
  return blocks;
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/** The tokens of a turn's `run` events, or null when none reported usage. */
export function turnUsage(entries: readonly TapeEntry[]): TurnUsage | null {
  let usage: TurnUsage | null = null;
  for (const entry of entries) {
    if (eventName(entry) !== "run") continue;
    const data = entry.payload.data;
    const reported = isRecord(data) ? data.usage : undefined;
    if (!isRecord(reported)) continue;
    usage ??= { prompt: 0, completion: 0, total: 0 };
    const prompt = count(reported.prompt_tokens ?? reported.input_tokens);
    const completion = count(reported.completion_tokens ?? reported.output_tokens);
    usage.prompt += prompt;
    usage.completion += completion;
    usage.total += count(reported.total_tokens) || prompt + completion;
  }
  return usage;
}

/** What a run of model calls cost: the sum of the prices known, and how many calls had one. */
export interface CostTotal {
  /** Null when no call had a known price. */
  usd: number | null;
  /** Model calls (`run` events). */
  calls: number;
  /** Calls with a known price. */
  priced: number;
}

/** The price the cost recorder put on a `run` event (`data.cost.usd`), or null. */
export function runCostUsd(entry: TapeEntry): number | null {
  const data = entry.payload.data;
  const cost = isRecord(data) ? data.cost : undefined;
  const usd = isRecord(cost) ? cost.usd : undefined;
  return typeof usd === "number" && Number.isFinite(usd) ? usd : null;
}

/** The cost of the `run` events among `entries`: the known prices summed. */
export function costOf(entries: readonly TapeEntry[]): CostTotal {
  const total: CostTotal = { usd: null, calls: 0, priced: 0 };
  for (const entry of entries) {
    if (eventName(entry) !== "run") continue;
    total.calls++;
    const usd = runCostUsd(entry);
    if (usd === null) continue;
    total.priced++;
    total.usd = (total.usd ?? 0) + usd;
  }
  return total;
}

/** Milliseconds from a turn's first entry to its last, or null when the dates do not parse. */
export function turnDurationMs(entries: readonly TapeEntry[]): number | null {
  const [firstEntry, lastEntry] = [entries.at(0), entries.at(-1)];
  if (firstEntry === undefined || lastEntry === undefined) return null;
  const first = Date.parse(firstEntry.date);
  const last = Date.parse(lastEntry.date);
  return Number.isFinite(first) && Number.isFinite(last) ? Math.max(0, last - first) : null;
}

/** The model a turn used (from its first `run` or `loop.start` event). */
export function turnModel(entries: readonly TapeEntry[]): string | null {
  for (const entry of entries) {
    const name = eventName(entry);
    if (name !== "run" && name !== "loop.start") continue;
    const data = entry.payload.data;
    const model = isRecord(data) ? data.model : undefined;
    if (typeof model === "string" && model !== "") return model;
  }
  return null;
}

/**
 * Where a page of at most `size` entries ending before index `end` starts: `end - size`,
 * moved forwards to the next turn start or anchor when one is within the page, so a page
 * does not begin in the middle of a turn unless the turn alone is longer than a page.
 */
export function pageStart(entries: readonly TapeEntry[], end: number, size: number): number {
  const start = Math.max(0, end - size);
  if (start === 0) return 0;
  // A turn starts at an anchor, a legacy start event, or an entry whose turn id differs from the one before it.
  for (let index = start; index < end; index++) {
    const entry = entries[index];
    const turnId = turnIdOf(entry);
    if (entry.kind === "anchor" || (turnId === null ? isLegacyTurnStart(entry) : turnId !== turnIdOf(entries[index - 1]))) return index;
  }
  return start;
}
