/**
 * The tape subsystem: entries, queries, the memory / JSONL file / SQLite stores, session
 * tapes with context building, forks, sidecars and the spill sidecar.
 * See `docs/tape.md` for the concepts.
 */
export { entries, prepareEntry, encodeEntry, decodeEntry, parseEntryLine, type EntryMeta, type PreparedEntry } from "./entry.ts";
export { utcNow, formatUtcDate, parseIsoDate } from "./date.ts";
export { tapeQuery, type TapeQueryBuilder, type DateBound } from "./query.ts";
export { runQuery, searchableText } from "./query-engine.ts";
export { appendMany } from "./append-many.ts";
export { createMemoryTapeStore } from "./memory-store.ts";
export { createFileTapeStore, TAPE_LOCK_FILE, type FileTapeStore, type FileTapeStoreOptions, type SkippedLine } from "./file-store.ts";
export { createSqliteTapeStore, type SqliteTapeStore, type SqliteTapeStoreOptions } from "./sqlite-store.ts";
export { createTapeStoreFromSettings, sqlitePathFromDsn, type TapeStoreSettings } from "./store-from-settings.ts";
export { createDefaultTapeContext, selectMessages, buildMessages, contextQuery, contextEntries, plainMessages } from "./context.ts";
export { createTape, chatRecordEntries, BOOTSTRAP_ANCHOR, type Tape, type TapeOptions, type ChatRecord } from "./tape.ts";
export type { TapeInfo, AnchorSummary } from "./tape-info.ts";
export { forkTape, redactMedia, type TapeFork, type ForkState } from "./fork.ts";
export { createTapes, sessionTapeName, resolveWorkspace, type Tapes, type TapesOptions } from "./tapes.ts";
export { sidecarTapeName, isSidecarTapeName, SIDECAR_TAPE_MARKER } from "./sidecar.ts";
export {
  createSpillSidecar,
  isSpillSidecar,
  spillRead,
  spillPreview,
  SPILL_SIDECAR_NAME,
  SPILL_READ_TOOL_NAME,
  SPILL_READ_MODEL_NAME,
  SPILL_CHUNK_BYTES,
  MAX_READ_CHUNKS,
  DEFAULT_SPILL_THRESHOLD,
  type SpillSidecar,
  type SpillManifest,
  type SpillPage,
  type SpillReadResult,
  type SpillReadOptions,
} from "./spill.ts";
