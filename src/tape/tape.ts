import { BubError, type BubErrorData } from "../kernel/errors.ts";
import type {
  ChatMessage,
  JsonObject,
  NewTapeEntry,
  TapeContext,
  TapeEntry,
  TapeHandle,
  TapeQuery,
  TapeSidecar,
  TapeStore,
} from "../kernel/tape-contract.ts";
import { appendMany } from "./append-many.ts";
import { buildMessages, contextEntries, contextQuery, createDefaultTapeContext } from "./context.ts";
import { entries, type EntryMeta } from "./entry.ts";
import { tapeQuery, type TapeQueryBuilder } from "./query.ts";
import { sidecarTapeName } from "./sidecar.ts";
import { summarizeAnchors, summarizeTape, type AnchorSummary, type TapeInfo } from "./tape-info.ts";
import { withTapeLock } from "./tape-lock.ts";
import { archiveTape, lifecycle, newArchiveStamp, tryArchive, tryReset, type SidecarLifecycle } from "./tape-reset.ts";

/** The name and state of the anchor every session tape starts with. */
export const BOOTSTRAP_ANCHOR = "session/start";

/** What one model step leaves on the tape (reference `record_chat`). */
export interface ChatRecord {
  runId: string;
  /** Written as a `system` entry when non-empty. */
  systemPrompt?: string | null;
  /** The user/steering messages sent with this step. */
  newMessages: readonly Record<string, unknown>[];
  /** The assistant's text; omitted (null) when the step ended in tool calls. */
  responseText?: string | null;
  /** True when `responseText` is what streamed before the call failed: its entry gets meta `incomplete: true`. */
  incomplete?: boolean;
  contextError?: BubError | BubErrorData | null;
  toolCalls?: readonly unknown[] | null;
  /** What the model said beside its tool calls, kept on the `tool_call` entry as `content`. */
  callText?: string | null;
  toolResults?: readonly unknown[] | null;
  error?: BubError | BubErrorData | null;
  usage?: Record<string, unknown> | null;
  provider?: string | null;
  model?: string | null;
  /** The call's price, `{ usd, source }` (src/cost/pricing.ts); written as `data.cost` of the `run` event. */
  cost?: { readonly usd: number | null; readonly source: string } | null;
  /** SHA-256 of the system prompt in force; put on the `run` event (the prompt itself is written only when it changes). */
  systemHash?: string | null;
  /** Wall time of the model call in ms, put on the `run` event as `elapsed_ms`. */
  elapsedMs?: number | null;
  /** Wall time of each tool call in ms (call order), put on the `run` event as `tool_elapsed_ms`. */
  toolElapsedMs?: readonly (number | null)[] | null;
}

/** Options of {@link createTape}. */
export interface TapeOptions {
  name: string;
  store: TapeStore;
  /** How the tape becomes model context (default: {@link createDefaultTapeContext}). */
  context?: TapeContext;
  /** Sidecars mounted on this tape (each owns the tape `<name>__sidecar__<sidecar>`). */
  sidecars?: readonly TapeSidecar[];
  /** Where `reset({ archive: true })` writes archives. */
  archivePath: string;
}

/**
 * One session's tape bound to a store: the append-only history the agent's context is rebuilt
 * from. Satisfies the kernel's {@link TapeHandle}.
 *
 * ```ts
 * const tape = tapes.sessionTape(sessionId, workspace);
 * await tape.ensureBootstrapAnchor();
 * const messages = await tape.readMessages();
 * ```
 */
export interface Tape extends TapeHandle {
  readonly name: string;
  readonly context: TapeContext;
  readonly store: TapeStore;
  readonly sidecars: readonly TapeSidecar[];
  readonly archivePath: string;
  /** The same tape read through another context. */
  withContext(context: TapeContext): Tape;
  /** The same tape over another store (a fork store, for instance). */
  withStore(store: TapeStore): Tape;
  /** A query builder for this tape. */
  query(): TapeQueryBuilder;
  /** A mounted sidecar by name. */
  getSidecar(name: string): TapeSidecar | undefined;
  /**
   * The tape name of a mounted sidecar.
   * @throws BubError `not_found` when no sidecar of that name is mounted.
   */
  sidecarTapeName(name: string): string;
  /** Appends one entry; resolves with the stored entry. */
  append(entry: NewTapeEntry): Promise<TapeEntry>;
  /** Appends entries in order, as one durable write where the store can. */
  appendBatch(batch: readonly NewTapeEntry[]): Promise<TapeEntry[]>;
  /** Appends an `event` entry. */
  appendEvent(name: string, data?: JsonObject | null, meta?: EntryMeta): Promise<TapeEntry>;
  /** Adds anchor `name` (with `state`) and a `handoff` event `{name, state}`; context restarts there. */
  handoff(name: string, state?: JsonObject | null, meta?: EntryMeta): Promise<TapeEntry[]>;
  /**
   * Adds the `session/start` anchor (`{owner: "human"}`) when the tape has no anchor yet; the
   * check and the append are one step per store and tape, so concurrent calls add one anchor.
   */
  ensureBootstrapAnchor(): Promise<void>;
  /** The last `limit` anchors (default 20). */
  anchors(limit?: number): Promise<AnchorSummary[]>;
  /** Entry, anchor and token-usage summary of the whole tape. */
  info(): Promise<TapeInfo>;
  /** Runs a query (normally one built with {@link Tape.query}). */
  search(query: TapeQuery | TapeQueryBuilder): Promise<TapeEntry[]>;
  /** The model messages of this tape under its context (entries with `meta.context === false` left out). */
  readMessages(): Promise<ChatMessage[]>;
  /** Records one model step as one batch, in the reference's order, every entry with `meta.run_id`. */
  recordChat(record: ChatRecord): Promise<TapeEntry[]>;
  /**
   * Empties the tape (archiving it and its sidecars first when asked), starts it again with
   * `session/start`, and resets the sidecars. Returns `"Archived: <path>"` or `"ok"`.
   */
  reset(options?: { archive?: boolean }): Promise<string>;
  /** Archives one sidecar tape and records `sidecar.archive`; returns a one-line outcome. */
  archiveSidecar(name: string, options?: { reason?: string }): Promise<string>;
  /** Resets one sidecar tape (optionally archiving it first) and records the outcome. */
  resetSidecar(name: string, options?: { archive?: boolean; reason?: string }): Promise<string>;
}

/** Whether `tape` holds at least one anchor. */
export async function hasAnchor(store: TapeStore, tape: string): Promise<boolean> {
  try {
    await store.fetchAll({ tape, lastAnchor: true, limit: 0 });
    return true;
  } catch (error) {
    if (!BubError.isInstance(error) || error.kind !== "not_found") throw error;
    return false;
  }
}

function isBuilder(query: TapeQuery | TapeQueryBuilder): query is TapeQueryBuilder {
  return "build" in query && typeof query.build === "function";
}

/** The `id` of each tool call (`""` for a call without one), or `[]` when no call has an id. */
export function toolCallIds(calls: readonly unknown[] | null | undefined): string[] {
  if (!calls || calls.length === 0) return [];
  const ids = calls.map((call) => {
    const id = typeof call === "object" && call !== null && "id" in call ? call.id : undefined;
    return typeof id === "string" ? id : "";
  });
  return ids.some((id) => id !== "") ? ids : [];
}

/**
 * The entries of one model step, in the order the reference records them. Besides
 * `run_id`, the `tool_call` and `tool_result` entries carry `tool_call_ids` (the calls' ids
 * in order); the correlation ids of the step come from its scope (see `prepareEntry`).
 */
export function chatRecordEntries(record: ChatRecord): NewTapeEntry[] {
  const meta = { run_id: record.runId };
  const batch: NewTapeEntry[] = [];
  if (record.systemPrompt) batch.push(entries.system(record.systemPrompt, meta));
  if (record.contextError) batch.push(entries.error(record.contextError, meta));
  for (const message of record.newMessages) batch.push(entries.message(message, meta));
  // The calls' own ids, so a call and its result can be found by the tool_call_id its work was written with.
  const calls = toolCallIds(record.toolCalls);
  const callMeta = calls.length > 0 ? { ...meta, tool_call_ids: calls } : meta;
  if (record.toolCalls && record.toolCalls.length > 0) batch.push(entries.toolCall(record.toolCalls, callMeta, record.callText));
  if (record.toolResults) batch.push(entries.toolResult(record.toolResults, callMeta));
  if (record.error && record.error !== record.contextError) batch.push(entries.error(record.error, meta));
  if (record.responseText !== undefined && record.responseText !== null) {
    batch.push(entries.message({ role: "assistant", content: record.responseText }, record.incomplete ? { ...meta, incomplete: true } : meta));
  }
  const data: JsonObject = { status: record.error ? "error" : "ok" };
  if (record.usage) data.usage = record.usage;
  if (record.provider) data.provider = record.provider;
  if (record.model) data.model = record.model;
  if (record.systemHash) data.system_hash = record.systemHash;
  if (record.cost) data.cost = { usd: record.cost.usd, source: record.cost.source };
  if (typeof record.elapsedMs === "number") data.elapsed_ms = record.elapsedMs;
  if (record.toolElapsedMs && record.toolElapsedMs.length > 0) data.tool_elapsed_ms = [...record.toolElapsedMs];
  batch.push(entries.event("run", data, meta));
  return batch;
}

/** Binds a tape name to a store, a context and sidecars. */
export function createTape(options: TapeOptions): Tape {
  const { name, store, archivePath } = options;
  const context = options.context ?? createDefaultTapeContext();
  const sidecars = Object.freeze([...(options.sidecars ?? [])]);

  const requireSidecar = (sidecar: string): TapeSidecar => {
    const found = sidecars.find((candidate) => candidate.name === sidecar);
    if (!found) {
      const mounted = sidecars.map((candidate) => candidate.name).join(", ") || "none";
      throw new BubError("not_found", `Tape sidecar '${sidecar}' is not mounted on tape ${name} (mounted: ${mounted}).`);
    }
    return found;
  };

  const tape: Tape = {
    name,
    context,
    store,
    sidecars,
    archivePath,
    withContext: (next) => createTape({ ...options, context: next }),
    withStore: (next) => createTape({ ...options, context, store: next }),
    query: () => tapeQuery(name),
    getSidecar: (sidecar) => sidecars.find((candidate) => candidate.name === sidecar),
    sidecarTapeName: (sidecar) => sidecarTapeName(name, requireSidecar(sidecar).name),
    append: (entry) => store.append(name, entry),
    appendBatch: (batch) => appendMany(store, name, batch),
    appendEvent: (event, data, meta) => store.append(name, entries.event(event, data, meta)),
    handoff: (anchor, state, meta) =>
      appendMany(store, name, [entries.anchor(anchor, state, meta), entries.event("handoff", { name: anchor, state: { ...state } }, meta)]),
    async ensureBootstrapAnchor() {
      // Check and append as one step per tape: concurrent first turns write one anchor.
      await withTapeLock(store, name, async () => {
        if (await hasAnchor(store, name)) return;
        await tape.handoff(BOOTSTRAP_ANCHOR, { owner: "human" });
      });
    },
    async anchors(limit = 20) {
      return summarizeAnchors(await store.fetchAll({ tape: name, kinds: ["anchor"] }), limit);
    },
    async info() {
      return summarizeTape(name, await store.fetchAll({ tape: name }));
    },
    search: (query) => store.fetchAll(isBuilder(query) ? query.build() : query),
    async readMessages() {
      const found = await store.fetchAll(contextQuery(name, context));
      return buildMessages(contextEntries(found), context);
    },
    recordChat: (record) => appendMany(store, name, chatRecordEntries(record)),
    async reset(resetOptions = {}) {
      let archived: string | null = null;
      const sidecarArchives = new Map<string, SidecarLifecycle>();
      if (resetOptions.archive) {
        const stamp = newArchiveStamp();
        archived = await archiveTape(store, name, archivePath, stamp);
        for (const sidecar of sidecars) {
          const { data } = await tryArchive(store, sidecar.name, sidecarTapeName(name, sidecar.name), archivePath, "tape.reset", stamp);
          sidecarArchives.set(sidecar.name, data);
        }
      }
      await store.reset(name);
      await tape.handoff(BOOTSTRAP_ANCHOR, archived ? { owner: "human", archived } : { owner: "human" });
      for (const sidecar of sidecars) {
        const archiveData = sidecarArchives.get(sidecar.name);
        const resetData =
          archiveData?.status === "error"
            ? lifecycle(sidecar.name, "skipped", "tape.reset", { cause: "archive_failed" })
            : await tryReset(store, sidecar.name, sidecarTapeName(name, sidecar.name), "tape.reset");
        if (archiveData) await tape.appendEvent("sidecar.archive", archiveData, { context: false });
        await tape.appendEvent("sidecar.reset", resetData, { context: false });
      }
      return archived ? `Archived: ${archived}` : "ok";
    },
    async archiveSidecar(sidecar, sidecarOptions = {}) {
      const tapeName = tape.sidecarTapeName(sidecar);
      const { path, data } = await tryArchive(store, sidecar, tapeName, archivePath, sidecarOptions.reason ?? "manual", newArchiveStamp());
      await tape.appendEvent("sidecar.archive", data, { context: false });
      return path ? `Archived ${sidecar}: ${path}` : `${sidecar} archive failed: ${data.error}`;
    },
    async resetSidecar(sidecar, sidecarOptions = {}) {
      const tapeName = tape.sidecarTapeName(sidecar);
      const reason = sidecarOptions.reason ?? "gc";
      const archive = sidecarOptions.archive ? await tryArchive(store, sidecar, tapeName, archivePath, reason, newArchiveStamp()) : null;
      const resetData =
        archive?.data.status === "error"
          ? lifecycle(sidecar, "skipped", reason, { cause: "archive_failed" })
          : await tryReset(store, sidecar, tapeName, reason);
      if (archive) await tape.appendEvent("sidecar.archive", archive.data, { context: false });
      await tape.appendEvent("sidecar.reset", resetData, { context: false });
      if (resetData.status === "error") return `${sidecar} reset failed: ${resetData.error}`;
      if (resetData.status === "skipped" && archive) return `${sidecar} archive failed: ${archive.data.error}; ${sidecar} reset skipped`;
      return archive?.path ? `Archived ${sidecar}: ${archive.path}` : "ok";
    },
  };
  return tape;
}
