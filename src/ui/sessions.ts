/**
 * What the sessions list shows for each tape, read through the store contract only, so the
 * view works on any store (files, SQLite, a plugin's). The newest entries come from the
 * slice after the last anchor, which the built-in stores read without scanning the tape.
 */
import { BubError } from "../kernel/errors.ts";
import type { TapeEntry, TapeStore } from "../kernel/tape-contract.ts";

/** Who a tape belongs to, when the store's name index knows it. */
export interface SessionName {
  sessionId: string;
  workspace?: string | null;
}

/** Looks up the session of a tape name (tape names are hashes); null when unknown. */
export type SessionNames = (tape: string) => Promise<SessionName | null>;

/** A row of a store's name index (`TapeStore.tapeNames`, where the store keeps one). */
interface NameRecord {
  readonly tape: string;
  readonly sessionId: string;
  readonly workspace: string;
}

/**
 * Session ids from the store's name index, when the store keeps one (`tapeNames()`); read
 * again at most every `maxAgeMs`, since new sessions are indexed as they start. Null when the
 * store has no index: tapes are then shown by name.
 */
export function storeSessionNames(store: TapeStore, maxAgeMs = 2000): SessionNames | null {
  const withIndex = store as TapeStore & { tapeNames?: () => Promise<readonly NameRecord[]> };
  if (typeof withIndex.tapeNames !== "function") return null;
  let cached: { at: number; names: Promise<Map<string, NameRecord>> } | null = null;
  return async (tape) => {
    if (!cached || Date.now() - cached.at > maxAgeMs) {
      const names = withIndex.tapeNames!().then((records) => new Map(records.map((record) => [record.tape, record])));
      cached = { at: Date.now(), names };
      names.catch(() => (cached = null));
    }
    const record = (await cached.names).get(tape);
    return record ? { sessionId: record.sessionId, workspace: record.workspace } : null;
  };
}

/** One row of the sessions list. */
export interface SessionSummary {
  readonly tape: string;
  readonly name: SessionName | null;
  /** Entries on the tape (ids run from 1 without gaps). */
  readonly entries: number;
  /** Date of the newest entry. */
  readonly lastDate: string | null;
  /** The newest message's text, on one line. */
  readonly preview: string | null;
}

function isNotFound(error: unknown): boolean {
  return BubError.isInstance(error) && error.kind === "not_found";
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
    const entry = entries[index]!;
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

/** The summary of one tape. */
export async function summariseTape(store: TapeStore, tape: string, names?: SessionNames): Promise<SessionSummary> {
  const [newest, name] = await Promise.all([newestEntries(store, tape), names ? names(tape) : null]);
  const last = newest.at(-1);
  return { tape, name, entries: last?.id ?? 0, lastDate: last?.date ?? null, preview: previewOf(newest) };
}

/** Summaries of every session tape, the most recently active first. */
export async function listSessions(store: TapeStore, names?: SessionNames, concurrency = 16): Promise<SessionSummary[]> {
  const tapes = await store.listTapes();
  const summaries: SessionSummary[] = new Array(tapes.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tapes.length) {
      const index = next++;
      summaries[index] = await summariseTape(store, tapes[index]!, names);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, tapes.length) }, worker));
  return summaries.sort((a, b) => (b.lastDate ?? "").localeCompare(a.lastDate ?? "") || a.tape.localeCompare(b.tape));
}

/** One search hit. */
export interface SearchHit {
  readonly tape: string;
  readonly entry: TapeEntry;
}

/** Entries of any session tape containing `text` (case-insensitive), newest first per tape, at most `limit` in all. */
export async function searchTapes(store: TapeStore, text: string, limit = 200, perTape = 20): Promise<SearchHit[]> {
  const hits: SearchHit[] = [];
  for (const tape of await store.listTapes()) {
    if (hits.length >= limit) break;
    const found = await store.fetchAll({ tape, text, limit: Math.min(perTape, limit - hits.length) });
    for (const entry of found) hits.push({ tape, entry });
  }
  return hits.sort((a, b) => b.entry.date.localeCompare(a.entry.date));
}
