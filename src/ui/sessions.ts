/**
 * What the sessions list shows, read through the store contract only, so the view works on
 * any store: per-tape stats (`tapeStats`, which the built-in stores answer without decoding
 * entries), session ids from the name index (`tapeNames`), and, for the rows shown, the
 * newest message, read from the slice after the last anchor.
 */
import { BubError } from "../kernel/errors.ts";
import type { TapeEntry, TapeStats, TapeStore } from "../kernel/tape-contract.ts";
import { tapeStatsOf } from "../tape/tape-stats.ts";

/** Who a tape belongs to, when the store's name index knows it. */
export interface SessionName {
  sessionId: string;
  workspace?: string | null;
}

/** Reads the sessions of tape names (tape names are hashes): tape name → session. */
export type SessionNames = () => Promise<ReadonlyMap<string, SessionName>>;

/** One row of the sessions list. */
export interface SessionSummary extends TapeStats {
  readonly name: SessionName | null;
  /** The newest message's text, on one line. */
  readonly preview: string | null;
}

function isNotFound(error: unknown): boolean {
  return BubError.isInstance(error) && error.kind === "not_found";
}

/**
 * Session ids from the store's name index (`tapeNames`), read afresh for each page since
 * sessions are indexed as they start; null when the store keeps no index (tapes are then
 * shown by name).
 */
export function storeSessionNames(store: TapeStore): SessionNames | null {
  if (!store.tapeNames) return null;
  const read = store.tapeNames.bind(store);
  return async () => new Map((await read()).map((record) => [record.tape, { sessionId: record.sessionId, workspace: record.workspace }]));
}

/**
 * The entries after the last anchor, or the whole tape when it has no anchor or nothing
 * follows the last one (a fresh anchor), so the result always ends with the newest entry.
 */
export async function newestEntries(store: TapeStore, tape: string): Promise<TapeEntry[]> {
  try {
    const slice = await store.fetchAll({ tape, lastAnchor: true });
    if (slice.length > 0) return slice;
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  return store.fetchAll({ tape });
}

/** Id of the newest entry of a tape (0 when empty). */
export async function lastEntryId(store: TapeStore, tape: string): Promise<number> {
  return (await newestEntries(store, tape)).at(-1)?.id ?? 0;
}

function previewOf(entries: readonly TapeEntry[]): string | null {
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index];
    if (entry.kind !== "message") continue;
    const content = entry.payload.content;
    const text = typeof content === "string" ? content : JSON.stringify(content ?? "");
    // A user prompt starts with the channel's context line and date; the words follow them.
    const words = text.replace(/^sender_id=[^\n]*\n(---Date:[^\n]*---\n)?/, "").replace(/\s+/g, " ").trim();
    if (words === "") continue;
    return `${String(entry.payload.role ?? "")}: ${words.length > 120 ? `${words.slice(0, 119)}…` : words}`;
  }
  return null;
}

/** Stats of every session tape, the most recently active first. */
export async function sessionStats(store: TapeStore): Promise<TapeStats[]> {
  const stats = await tapeStatsOf(store);
  return [...stats].sort((a, b) => (b.lastDate ?? "").localeCompare(a.lastDate ?? "") || a.tape.localeCompare(b.tape));
}

/** The rows for `stats`: each with its session name and newest message. */
export async function summarise(store: TapeStore, stats: readonly TapeStats[], names?: SessionNames, concurrency = 16): Promise<SessionSummary[]> {
  const rows: SessionSummary[] = new Array(stats.length);
  const index = names ? await names() : null;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < stats.length) {
      const at = next++;
      const tape = stats[at].tape;
      rows[at] = { ...stats[at], name: index?.get(tape) ?? null, preview: previewOf(await newestEntries(store, tape)) };
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, stats.length) }, worker));
  return rows;
}

/** One search hit. */
export interface SearchHit {
  readonly tape: string;
  readonly entry: TapeEntry;
}

/** Entries of any session tape containing `text` (case-insensitive), newest first, at most `perTape` per tape and `limit` in all. */
export async function searchTapes(store: TapeStore, text: string, limit = 200, perTape = 20): Promise<SearchHit[]> {
  const hits: SearchHit[] = [];
  for (const tape of await store.listTapes()) {
    if (hits.length >= limit) break;
    const found = await store.fetchAll({ tape, text, limit: Math.min(perTape, limit - hits.length) });
    for (const entry of found) hits.push({ tape, entry });
  }
  return hits.sort((a, b) => b.entry.date.localeCompare(a.entry.date));
}
