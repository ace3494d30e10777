/**
 * A read view of a tape store with secrets hidden: every entry it answers has each string
 * of its payload and meta (object keys too) passed through a redaction, such as
 * `redactSecrets` with the current settings' secrets. The tape keeps what was written: a
 * tape from before a key was configured as a secret still holds the key, so whatever shows
 * or exports a tape reads it through this view (`bub tape show`/`export`, `bub ui`).
 */
import type { JsonObject, TapeEntry, TapeNameRecord, TapeQuery, TapeStore } from "../kernel/tape-contract.ts";
import { isRecord } from "../kernel/guards.ts";
import { searchableText } from "./query-engine.ts";
import { takesEncoded, type EncodedAppendStore } from "./append-many.ts";

/** Replaces the secrets in one text (the text itself when it holds none). */
export type TextRedaction = (text: string) => string;

function redactValue(value: unknown, redact: TextRedaction): unknown {
  if (typeof value === "string") return redact(value);
  if (Array.isArray(value)) return value.map((item) => redactValue(item, redact));
  if (isRecord(value)) return redactObject(value, redact);
  return value;
}

function redactObject(value: Record<string, unknown>, redact: TextRedaction): JsonObject {
  const out: JsonObject = {};
  for (const [key, item] of Object.entries(value)) out[redact(key)] = redactValue(item, redact);
  return out;
}

/** `entry` with every string of its payload and meta redacted (kind, id and date are the store's own). */
export function redactEntry(entry: TapeEntry, redact: TextRedaction): TapeEntry {
  return { ...entry, payload: redactObject(entry.payload, redact), meta: redactObject(entry.meta, redact) };
}

/**
 * `store` seen through `redact`: {@link TapeStore.fetchAll} answers redacted entries (a text
 * query only those whose redacted text still matches, so a search cannot find a secret that
 * is shown as a marker), the name index answers redacted session ids; everything else,
 * writes included, goes to `store` unchanged.
 */
export function redactedTapeStore(store: TapeStore, redact: TextRedaction): TapeStore {
  const fetchAll = async (query: TapeQuery): Promise<TapeEntry[]> => {
    if (!query.text) return (await store.fetchAll(query)).map((entry) => redactEntry(entry, redact));
    // The store matches the text before redaction: match again after it, then apply the limit.
    const needle = query.text.toLowerCase();
    const found = (await store.fetchAll({ ...query, limit: undefined })).map((entry) => redactEntry(entry, redact));
    const kept = found.filter((entry) => searchableText(entry).includes(needle));
    return query.limit === undefined ? kept : kept.slice(0, query.limit);
  };
  const view: TapeStore & Partial<Pick<EncodedAppendStore, "appendEncoded">> = {
    listTapes: () => store.listTapes(),
    fetchAll,
    append: (tape, entry) => store.append(tape, entry),
    reset: (tape) => store.reset(tape),
  };
  if (store.appendBatch) view.appendBatch = store.appendBatch.bind(store);
  if (takesEncoded(store)) view.appendEncoded = store.appendEncoded.bind(store);
  if (store.close) view.close = store.close.bind(store);
  if (store.recordTapeName) view.recordTapeName = store.recordTapeName.bind(store);
  if (store.tapeStats) view.tapeStats = store.tapeStats.bind(store);
  const tapeNames = store.tapeNames?.bind(store);
  if (tapeNames) {
    view.tapeNames = async (): Promise<TapeNameRecord[]> =>
      (await tapeNames()).map((record) => ({ ...record, sessionId: redact(record.sessionId), workspace: redact(record.workspace) }));
  }
  return view;
}
