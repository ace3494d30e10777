import { BubError, type BubErrorData } from "../kernel/errors.ts";
import { redactJsonText } from "../config/redaction.ts";
import { errorMessage } from "../config/thrown.ts";
import { currentCorrelationMeta } from "../kernel/correlation.ts";
import type { JsonObject, NewTapeEntry, TapeEntry } from "../kernel/tape-contract.ts";
import { dateFromEpochSeconds, utcNow } from "./date.ts";
import { isRecord } from "../kernel/guards.ts";

/** Extra fields stored beside an entry's payload (`run_id`, `context: false`, ...). */
export type EntryMeta = Record<string, unknown>;

function make(kind: string, payload: JsonObject, meta: EntryMeta | undefined): NewTapeEntry {
  return { kind, payload, meta: { ...meta }, date: utcNow() };
}

/**
 * Constructors for the entry kinds the runtime writes. Each returns an entry without an
 * id (the store assigns it) dated now; `meta` becomes the entry's `meta`.
 *
 * ```ts
 * await store.append(tape, entries.message({ role: "user", content: "hi" }, { run_id }));
 * await store.append(tape, entries.anchor("session/start", { owner: "human" }));
 * ```
 */
export const entries = {
  /** A chat message (`{role, content, ...}`), stored as the payload itself. */
  message(message: Record<string, unknown>, meta?: EntryMeta): NewTapeEntry {
    return make("message", { ...message }, meta);
  },
  /** The system prompt used for a model call. */
  system(content: string, meta?: EntryMeta): NewTapeEntry {
    return make("system", { content }, meta);
  },
  /** A named point in the tape; context is rebuilt from the last one. */
  anchor(name: string, state?: JsonObject | null, meta?: EntryMeta): NewTapeEntry {
    return make("anchor", state == null ? { name } : { name, state: { ...state } }, meta);
  },
  /**
   * Tool calls a model asked for: `[{id, type: "function", function: {name, arguments}}]`,
   * with `content`, the text it said beside them, when there was some.
   */
  toolCall(calls: readonly unknown[], meta?: EntryMeta, content?: string | null): NewTapeEntry {
    return make("tool_call", content ? { calls: [...calls], content } : { calls: [...calls] }, meta);
  },
  /** Results of tool calls, in the order of the calls. */
  toolResult(results: readonly unknown[], meta?: EntryMeta): NewTapeEntry {
    return make("tool_result", { results: [...results] }, meta);
  },
  /** A failure: `{kind, message, details?}`. */
  error(error: BubError | BubErrorData, meta?: EntryMeta): NewTapeEntry {
    const data = BubError.isInstance(error) ? error.toData() : error;
    return make("error", { ...data }, meta);
  },
  /** A named runtime event with optional data. */
  event(name: string, data?: JsonObject | null, meta?: EntryMeta): NewTapeEntry {
    return make("event", data == null ? { name } : { name, data: { ...data } }, meta);
  },
} as const;

/** An entry checked for shape, with defaults filled in, waiting for its id. */
export interface PreparedEntry {
  readonly kind: string;
  readonly payload: JsonObject;
  readonly meta: JsonObject;
  readonly date: string;
}

/**
 * Checks an entry handed to a store and fills in `meta` and `date`. An entry written inside
 * a correlation scope (a turn, a model call, a tool call: `src/kernel/correlation.ts`) gets
 * the scope's `turn_id`, `model_call_id` and `tool_call_id` in its meta, unless its meta
 * already names them (an entry merged from a turn's fork keeps the ids it was written with).
 * @throws BubError `invalid_input` when the kind is not a string or payload/meta are not objects.
 */
export function prepareEntry(entry: NewTapeEntry): PreparedEntry {
  if (!isRecord(entry)) {
    throw new BubError("invalid_input", "A tape entry must be an object with kind and payload: build it with entries.event(...) or similar.");
  }
  if (typeof entry.kind !== "string" || entry.kind === "") {
    throw new BubError("invalid_input", `A tape entry needs a non-empty string kind (got ${JSON.stringify(entry.kind) ?? "undefined"}).`);
  }
  if (!isRecord(entry.payload)) {
    throw new BubError("invalid_input", `The payload of a '${entry.kind}' tape entry must be an object.`);
  }
  if (entry.meta != null && !isRecord(entry.meta)) {
    throw new BubError("invalid_input", `The meta of a '${entry.kind}' tape entry must be an object.`);
  }
  if (entry.date != null && typeof entry.date !== "string") {
    throw new BubError("invalid_input", `The date of a '${entry.kind}' tape entry must be an ISO string.`);
  }
  return { kind: entry.kind, payload: entry.payload, meta: withCorrelationMeta(entry.meta), date: entry.date ?? utcNow() };
}

/** `meta` with the current correlation ids it does not name yet, after its own keys. */
function withCorrelationMeta(meta: JsonObject | undefined): JsonObject {
  const ids = currentCorrelationMeta();
  if (!ids) return meta ?? {};
  const stamped: JsonObject = { ...meta };
  for (const [key, id] of Object.entries(ids)) if (!Object.hasOwn(stamped, key)) stamped[key] = id;
  return stamped;
}

/**
 * The JSON text of a stored entry (`{"id","kind","payload","meta","date"}`, non-ASCII kept),
 * the reference runtime's line format without the trailing newline: `{"id":<id>,` followed
 * by {@link encodeEntryBody}'s `body`, so every configured secret in it is redacted.
 * @throws BubError `invalid_input` when the payload or meta cannot be written as JSON.
 */
export function encodeEntry(id: number, entry: PreparedEntry): string {
  return `{"id":${id},${encodeEntryBody(entry).body}`;
}

/**
 * An entry serialized once, except for its id: what every one of bub's stores writes (the
 * file store a line, the SQLite and PostgreSQL stores a row) and what the entry reads back
 * as. A turn's fork encodes each entry when it is written and hands these to the store at
 * merge, so nothing is encoded, redacted or parsed a second time.
 */
export interface EncodedEntry {
  /** The JSON text after `{"id":<id>,` (it starts with `"kind"`). */
  readonly body: string;
  /** UTF-8 length of `body`. */
  readonly bodyBytes: number;
  /** The JSON text of the payload, as it is inside `body` (a row store's `payload` column). */
  readonly payloadJson: string;
  /** The JSON text of the meta, as it is inside `body` (a row store's `meta` column). */
  readonly metaJson: string;
  /** The entry as it will read back, without its id: parsed from the texts above. */
  readonly value: Omit<TapeEntry, "id">;
}

/** The JSON text of a part of `entry`. */
function jsonText(value: unknown, entry: PreparedEntry): string {
  let text: unknown;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new BubError("invalid_input", `A '${entry.kind}' tape entry is not JSON-serializable (${errorMessage(error)}): store plain data only.`, {
      cause: error,
    });
  }
  if (typeof text !== "string") throw new BubError("invalid_input", `A '${entry.kind}' tape entry is not JSON-serializable (a part of it writes as nothing): store plain data only.`);
  return text;
}

/** A string part of `entry` (its kind, its date) as JSON text with secrets redacted, and as it reads back. */
function redactedString(value: string, entry: PreparedEntry): { json: string; value: string } {
  const raw = jsonText(value, entry);
  const json = redactJsonText(raw);
  if (json === raw) return { json, value };
  const parsed: unknown = JSON.parse(json);
  return { json, value: typeof parsed === "string" ? parsed : value };
}

/** The object a redacted payload or meta text reads back as. */
function parsedObject(text: string, entry: PreparedEntry): JsonObject {
  const value: unknown = JSON.parse(text);
  if (!isRecord(value)) throw new BubError("invalid_input", `The payload and meta of a '${entry.kind}' tape entry must write as JSON objects (one writes as ${text.slice(0, 40)}).`);
  return value;
}

/** The bytes of `body` besides its four parts: `"kind":`, `,"payload":`, `,"meta":`, `,"date":` and `}`. */
const BODY_FRAME_BYTES = 35;

/**
 * Serializes an entry ahead of id assignment, the one encoding an entry gets: `{"id":<id>,`
 * + `body` is the reference line format, equal to `JSON.stringify({id, kind, payload, meta,
 * date})` with each configured secret replaced by `[redacted:<setting>]` (so no store or
 * sidecar ever writes one), and `value` is what that text parses back to.
 * @throws BubError `invalid_input` when the payload or meta cannot be written as JSON.
 */
export function encodeEntryBody(entry: PreparedEntry): EncodedEntry {
  const kind = redactedString(entry.kind, entry);
  const payloadJson = redactJsonText(jsonText(entry.payload, entry));
  const metaJson = redactJsonText(jsonText(entry.meta, entry));
  const date = redactedString(entry.date, entry);
  const body = `"kind":${kind.json},"payload":${payloadJson},"meta":${metaJson},"date":${date.json}}`;
  const value = { kind: kind.value, payload: parsedObject(payloadJson, entry), meta: parsedObject(metaJson, entry), date: date.value };
  // Measured part by part: measuring `body` would flatten it, a copy of every part the entry
  // keeps until its write joins the lines anyway.
  const bodyBytes = BODY_FRAME_BYTES + Buffer.byteLength(kind.json) + Buffer.byteLength(payloadJson) + Buffer.byteLength(metaJson) + Buffer.byteLength(date.json);
  return { body, bodyBytes, payloadJson, metaJson, value };
}

/** A new entry checked ({@link prepareEntry}) and encoded ({@link encodeEntryBody}): what a store's `appendBatch` hands its `appendEncoded`. */
export function encodeNewEntry(entry: NewTapeEntry): EncodedEntry {
  return encodeEntryBody(prepareEntry(entry));
}

/**
 * Turns a decoded JSON value into an entry, following the reference reader: `id` must be an
 * integer, `kind` a string and `payload` an object; a non-object `meta` becomes `{}`; a missing
 * `date` is derived from a legacy `timestamp` (epoch seconds).
 * Returns a short reason instead when the value is not an entry.
 */
export function decodeEntry(value: unknown): TapeEntry | string {
  if (!isRecord(value)) return "not a JSON object";
  const { id, kind, payload } = value;
  if (typeof id !== "number" || !Number.isSafeInteger(id)) return "id is not an integer";
  if (typeof kind !== "string") return "kind is not a string";
  if (!isRecord(payload)) return "payload is not an object";
  const meta = isRecord(value.meta) ? value.meta : {};
  let date: string;
  const legacy = value.date ?? value.timestamp;
  if (typeof value.date === "string") date = value.date;
  else if (typeof legacy === "number" && Number.isFinite(legacy)) date = dateFromEpochSeconds(legacy);
  else if (legacy == null) date = dateFromEpochSeconds(0);
  else return "date is not a string";
  return { id, kind, payload, meta, date };
}

/** Parses one line of a JSONL tape; returns a reason when it is not an entry. */
export function parseEntryLine(text: string): TapeEntry | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return "not valid JSON";
  }
  return decodeEntry(value);
}

/** A deep copy of a JSON value (what entries hold): several times quicker than `structuredClone` here. */
function cloneJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(cloneJson);
  return isRecord(value) ? cloneObject(value) : value;
}

function cloneObject(value: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of Object.keys(value)) {
    const child = cloneJson(value[key]);
    // An own "__proto__" key (JSON.parse makes one) must stay a key, not become the prototype.
    if (key === "__proto__") Object.defineProperty(out, key, { value: child, enumerable: true, writable: true, configurable: true });
    else out[key] = child;
  }
  return out;
}

function freezeJson(value: unknown): void {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const child of Array.isArray(value) ? value : Object.values(value)) freezeJson(child);
}

/**
 * Freezes `entry` with its payload and meta, in place, and answers it: an entry that is shared
 * instead of copied (a turn's snapshot hands the same entries to every query) can then never be
 * changed by one reader under another; a change throws a `TypeError`.
 */
export function freezeEntry(entry: TapeEntry): TapeEntry {
  freezeJson(entry.payload);
  freezeJson(entry.meta);
  return Object.freeze(entry);
}

/** A deep copy of an entry, so callers can never change what a store holds. */
export function cloneEntry(entry: TapeEntry): TapeEntry {
  return { id: entry.id, kind: entry.kind, payload: cloneObject(entry.payload), meta: cloneObject(entry.meta), date: entry.date };
}
