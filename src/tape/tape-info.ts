import type { JsonObject, TapeEntry } from "../kernel/tape-contract.ts";
import { isRecord } from "../kernel/guards.ts";

/** A summary of one tape, as the `tape.info` tool reports it. */
export interface TapeInfo {
  readonly name: string;
  /** Every entry on the tape. */
  readonly entries: number;
  readonly anchors: number;
  /** Name of the last anchor, or null when there is none (or it has no name). */
  readonly lastAnchor: string | null;
  /** Entries after the last anchor (all entries when there is none). */
  readonly entriesSinceLastAnchor: number;
  /** `total_tokens` of the newest `run` event that reports it. */
  readonly lastTokenUsage: number | null;
  /** `cached_tokens / prompt_tokens` of that same event, when both are known. */
  readonly lastTokenCacheHitRate: number | null;
}

/** One anchor as `tape.anchors` lists it. */
export interface AnchorSummary {
  readonly name: string;
  readonly state: Record<string, unknown>;
}

function record(value: unknown): JsonObject | undefined {
  return isRecord(value) ? value : undefined;
}

function integer(value: unknown): number | undefined {
  return typeof value === "number" && Number.isInteger(value) ? value : undefined;
}

function lastUsage(entries: readonly TapeEntry[]): { usage: number | null; rate: number | null } {
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index];
    if (entry.kind !== "event" || entry.payload.name !== "run") continue;
    const usage = record(record(entry.payload.data)?.usage);
    const total = integer(usage?.total_tokens);
    if (!usage || total === undefined) continue;
    const prompt = integer(usage.prompt_tokens);
    const cached = integer(record(usage.prompt_tokens_details)?.cached_tokens);
    const rate = prompt !== undefined && prompt > 0 && cached !== undefined ? cached / prompt : null;
    return { usage: total, rate };
  }
  return { usage: null, rate: null };
}

/** Summarizes the entries of a whole tape (oldest first). */
export function summarizeTape(name: string, entries: readonly TapeEntry[]): TapeInfo {
  let anchors = 0;
  let lastIndex = -1;
  entries.forEach((entry, index) => {
    if (entry.kind === "anchor") {
      anchors++;
      lastIndex = index;
    }
  });
  const lastName = lastIndex >= 0 ? entries[lastIndex].payload.name : undefined;
  const { usage, rate } = lastUsage(entries);
  return {
    name,
    entries: entries.length,
    anchors,
    lastAnchor: lastName === undefined || lastName === null || lastName === "" ? null : String(lastName),
    entriesSinceLastAnchor: lastIndex >= 0 ? entries.length - lastIndex - 1 : entries.length,
    lastTokenUsage: usage,
    lastTokenCacheHitRate: rate,
  };
}

/** The last `limit` anchors of a tape, each with its state (`{}` when it has none). */
export function summarizeAnchors(anchorEntries: readonly TapeEntry[], limit: number): AnchorSummary[] {
  const tail = limit > 0 ? anchorEntries.slice(-limit) : [];
  return tail.map((entry) => ({ name: String(entry.payload.name ?? "-"), state: { ...record(entry.payload.state) } }));
}
