/**
 * The tape contract the kernel speaks: entry shape, queries and the store interface.
 * Implementations live in `src/tape/`; plugins may provide their own store through
 * the `provideTapeStore` hook.
 */

import type { TurnState } from "./types.ts";

/** JSON-compatible object payload. */
export type JsonObject = Record<string, unknown>;

/** One immutable fact on a tape. Same JSON shape as the reference runtime's entries. */
export interface TapeEntry {
  /** Assigned by the store: per tape, strictly increasing, never reused. */
  id: number;
  kind: string;
  payload: JsonObject;
  meta: JsonObject;
  /** UTC ISO-8601 with microseconds and `+00:00`, e.g. `2026-01-02T03:04:05.123456+00:00`. */
  date: string;
}

/** An entry before a store has given it an id. */
export type NewTapeEntry = Omit<TapeEntry, "id"> & { id?: number };

/**
 * Where a session tape ended, as a channel saw it when it admitted a message: the id and
 * date of its last entry (id 0 and date "": it had none). The shared inbound queue reads it
 * in the statement that queues the message, when no turn of the session is queued or running
 * before it. A turn whose process last held the tape up to that very entry does not read the
 * tape again (see `tape/tape-snapshot.ts`).
 */
export interface TapeEnd {
  readonly tape: string;
  readonly id: number;
  readonly date: string;
}

/** What to read from one tape. Slicing first (anchors), then filters (dates, text, kinds), then limit. */
export interface TapeQuery {
  tape: string;
  /** Entries after the last anchor with this name. */
  afterAnchor?: string;
  /** Entries after the last anchor of any name. */
  lastAnchor?: boolean;
  /** Entries strictly between the last anchor named `start` and the next anchor named `end`. */
  betweenAnchors?: { start: string; end: string };
  /** Inclusive date bounds (ISO date or datetime); either side may be omitted. */
  betweenDates?: { start?: string; end?: string };
  /** Case-insensitive text search over each entry. */
  text?: string;
  /** Only entries of these kinds. */
  kinds?: readonly string[];
  /** At most this many entries. */
  limit?: number;
  /**
   * Only entries with a greater id: a reader that remembers the last id it saw reads only
   * what was appended since (ids increase along a tape, so a store may stop at the first
   * entry at or below it).
   */
  afterId?: number;
}

/** One row of a store's name index: the session and workspace a session tape belongs to. */
export interface TapeNameRecord {
  /** The tape name, `md5(workspace)[:16]__md5(sessionId)[:16]`. */
  readonly tape: string;
  readonly sessionId: string;
  /** The workspace path the name was made from (resolved, absolute). */
  readonly workspace: string;
}

/** What `bub tape list` shows of one session tape, read without decoding every entry where the store can. */
export interface TapeStats {
  readonly tape: string;
  readonly entries: number;
  /** Turns on the tape (see `src/tape/turns.ts`: one per `meta.turn_id`, else per `loop.start` or `command` event). */
  readonly turns: number;
  /** The date of the newest entry; null for an empty tape. */
  readonly lastDate: string | null;
  /** Bytes the tape takes in the store (its file, or its rows' JSON text); null when the store cannot tell. */
  readonly bytes: number | null;
}

/** Persistent, append-only storage of tapes. Every method is async. */
export interface TapeStore {
  /** Names of the session tapes held (sidecar tapes excluded), sorted. */
  listTapes(): Promise<string[]>;
  /** Entries matching a query, oldest first (text searches: newest first). */
  fetchAll(query: TapeQuery): Promise<TapeEntry[]>;
  /** Appends one entry; resolves with the stored entry (its id assigned) once it is durable. */
  append(tape: string, entry: NewTapeEntry): Promise<TapeEntry>;
  /** Appends several entries in order, durably, as one write where the store can. */
  appendBatch?(tape: string, entries: readonly NewTapeEntry[]): Promise<TapeEntry[]>;
  /** Forgets a tape entirely. */
  reset(tape: string): Promise<void>;
  /** Releases files or connections. */
  close?(): Promise<void>;
  /**
   * Adds a tape to the store's name index (tape names are hashes; the index is how
   * `bub tape` finds a session by its id). Called when a session tape is first used; a
   * tape already indexed is left as it is. Optional: without it sessions are found by hash.
   */
  recordTapeName?(record: TapeNameRecord): Promise<void>;
  /** Every record of the name index (optional, with {@link TapeStore.recordTapeName}). */
  tapeNames?(): Promise<TapeNameRecord[]>;
  /** {@link TapeStats} of every session tape. Optional: without it they are computed from {@link TapeStore.fetchAll}. */
  tapeStats?(): Promise<TapeStats[]>;
  /**
   * True when the store knows, without reading entries back, that the tape still ends with
   * the entry `end` names (same id and date); false when it does not end there or the store
   * cannot tell that way. Optional: the tape snapshot reads that entry back otherwise.
   */
  endsAt?(end: TapeEnd): Promise<boolean>;
}

/** Marker for "read after the last anchor" in a {@link TapeContext}. */
export const LAST_ANCHOR: unique symbol = Symbol.for("bub.tape.lastAnchor");

/** A chat message as sent to a model (OpenAI chat shape). */
export type ChatMessage = { role: string; content?: unknown; [key: string]: unknown };

/** Turns selected tape entries into model messages. */
export type ContextSelector = (
  entries: TapeEntry[],
  context: TapeContext,
) => ChatMessage[] | Promise<ChatMessage[]>;

/** How a tape becomes model context: which slice to read and how to turn it into messages. */
export interface TapeContext {
  /** `LAST_ANCHOR`: after the last anchor; `null`: everything; a name: after that anchor. */
  anchor: typeof LAST_ANCHOR | string | null;
  select?: ContextSelector;
  /** The turn's state (empty outside a turn). */
  state: TurnState;
}

/** True when a value has the shape of a {@link TapeContext}. */
export function isTapeContext(value: unknown): value is TapeContext {
  if (typeof value !== "object" || value === null || !("anchor" in value) || !("state" in value)) return false;
  const select = "select" in value ? value.select : undefined;
  const anchorOk = value.anchor === null || value.anchor === LAST_ANCHOR || typeof value.anchor === "string";
  return anchorOk && (select === undefined || typeof select === "function") && typeof value.state === "object";
}

/** A named companion tape mounted beside every session tape (`<tape>__sidecar__<name>`). */
export interface TapeSidecar {
  readonly name: string;
}

/**
 * A session tape as plugins see it: the `tape` of a context tool's `ToolContext`, of
 * the `continuePrompt` hook, and the turn context's `tape` (`context.tape`) in every turn hook.
 * The runtime's own tape object (in `src/tape/`) has more; this is the part plugins may rely on.
 *
 * ```ts
 * await tape.appendEvent("note", { text: "buy milk" });
 * const notes = await tape.search({ tape: tape.name, kinds: ["event"], text: "milk" });
 * ```
 */
export interface TapeHandle {
  /** The tape's name in its store (`md5(workspace)[:16]__md5(sessionId)[:16]`, or a fork of it). */
  readonly name: string;
  /** How this tape becomes model context. */
  readonly context: TapeContext;
  /** Appends one entry; resolves with the stored entry (its id assigned). */
  append(entry: NewTapeEntry): Promise<TapeEntry>;
  /** Appends an `event` entry `{name, data}`; `meta.context === false` keeps it out of the model's context. */
  appendEvent(name: string, data?: JsonObject | null, meta?: JsonObject): Promise<TapeEntry>;
  /** Adds anchor `name` (with `state`) and a `handoff` event; the model's context restarts there. */
  handoff(name: string, state?: JsonObject | null, meta?: JsonObject): Promise<TapeEntry[]>;
  /** Entries matching a query, oldest first (text searches: newest first). Set `tape: tape.name` to read this tape. */
  search(query: TapeQuery): Promise<TapeEntry[]>;
  /** The model messages this tape's context yields now. */
  readMessages(): Promise<ChatMessage[]>;
}
