/**
 * The envelope: what a channel hands the runtime and what a turn sends back. Channels and
 * `processInbound` build it once, at the edge ({@link toEnvelope}); every hook of a turn
 * then reads typed fields. On the wire and on the tape it keeps the reference's snake_case
 * JSON shape ({@link envelopeToJson}).
 */
import { isRecord } from "./guards.ts";
import type { TapeEnd } from "./tape-contract.ts";

/** A prompt: plain text, or a list of content parts (text, images, audio). */
export type Prompt = string | PromptPart[];

/** One content part of a multimodal prompt, in the OpenAI chat shape. */
export type PromptPart = { type: string; [key: string]: unknown };

/** What kind of message an envelope carries. */
export type EnvelopeKind = "normal" | "command" | "error";

/** A media attachment of a message. */
export interface MediaItem {
  type: "image" | "audio" | "video" | "document";
  mimeType: string;
  filename?: string;
  url?: string;
  /** Fetches the bytes on demand (e.g. a Telegram file download). */
  dataFetcher?: () => Promise<Uint8Array | null>;
}

/**
 * Entered when a turn loads its state and exited when it saves it (a typing indicator, say).
 * `settled`, when the channel manager runs the turn, is told once the turn is over with its
 * replies dispatched (`done`, also after a failure that was reported), or that a shutdown
 * cancelled it (`cancelled`).
 */
export interface TurnLifespan {
  enter(): Promise<void> | void;
  exit(error?: unknown): Promise<void> | void;
  settled?(outcome: "done" | "cancelled"): void;
}

/**
 * One message in or out of a turn. The named fields are the ones the pipeline and the
 * builtin channels use; a plugin adds its own under names with a dot (its own prefix:
 * `envelope["acme.priority"]`), so a misspelt field (`envelope.contnet`) does not compile.
 */
export interface Envelope {
  /** The text of the message (`""` when it has none). */
  content: string;
  /** The channel it came from (`""` when it names none). */
  channel: string;
  /** The chat within that channel (`""` when it names none). */
  chatId: string;
  /** The session it belongs to; set by `processInbound` once resolved. */
  sessionId?: string;
  kind: EnvelopeKind;
  media: MediaItem[];
  /**
   * The message's metadata (the reference calls it `context`): rendered `k=v|k=v` into the
   * prompt, keys starting with `_` left out.
   */
  context: Record<string, unknown>;
  /** The channel replies go to, when not the one it came from. */
  outputChannel?: string;
  /** Whether the message addresses the bot (a mention, a private chat). */
  isActive?: boolean;
  lifespan?: TurnLifespan | null;
  /** Where the session tape ended when the channel admitted the message, when it knows (see {@link TapeEnd}). */
  tapeEnd?: TapeEnd;
  /** What plugins add, under a name with a dot: `acme.priority`, read as `envelope["acme.priority"]`. */
  [extension: `${string}.${string}`]: unknown;
}

/** What {@link toEnvelope} accepts: a typed envelope, a partial one in camelCase or the reference's snake_case, or plain text. */
export type EnvelopeInput = Partial<Envelope> | Readonly<Record<string, unknown>> | string;

const KINDS: ReadonlySet<string> = new Set<EnvelopeKind>(["normal", "command", "error"]);
const MEDIA_TYPES: ReadonlySet<string> = new Set<MediaItem["type"]>(["image", "audio", "video", "document"]);

/** Wire (snake_case) names of the typed fields, and the typed name each one fills. */
const TYPED_NAMES: ReadonlyMap<string, string> = new Map([
  ["session_id", "sessionId"],
  ["chat_id", "chatId"],
  ["output_channel", "outputChannel"],
  ["is_active", "isActive"],
]);

function isKind(value: unknown): value is EnvelopeKind {
  return typeof value === "string" && KINDS.has(value);
}

function isMediaItem(value: unknown): value is MediaItem {
  return isRecord(value) && typeof value.type === "string" && MEDIA_TYPES.has(value.type) && typeof value.mimeType === "string";
}

function isLifespan(value: unknown): value is TurnLifespan {
  return isRecord(value) && typeof value.enter === "function" && typeof value.exit === "function";
}

function isTapeEnd(value: unknown): value is TapeEnd {
  return isRecord(value) && typeof value.tape === "string" && Number.isSafeInteger(value.id) && typeof value.date === "string";
}

/** True when `value` already has every field of an {@link Envelope} with its type. */
export function isEnvelope(value: unknown): value is Envelope {
  return (
    isRecord(value) &&
    typeof value.content === "string" &&
    typeof value.channel === "string" &&
    typeof value.chatId === "string" &&
    isKind(value.kind) &&
    Array.isArray(value.media) &&
    isRecord(value.context)
  );
}

function text(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return "";
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

/**
 * The typed envelope of what a channel or caller hands the runtime, built once at the edge.
 * An envelope is returned as it is (the same object); anything else becomes a new one:
 * plain text is its content, an object's fields are read in camelCase or snake_case
 * (`chat_id` fills `chatId`), missing fields get their defaults (`""`, `normal`, no media,
 * an empty context), and the object's other keys are kept as extensions.
 *
 * ```ts
 * toEnvelope({ channel: "cli", chat_id: "local", content: "hi" }).chatId; // "local"
 * ```
 */
export function toEnvelope(input: EnvelopeInput | Envelope): Envelope {
  if (isEnvelope(input)) return input;
  const envelope: Envelope = { content: "", channel: "", chatId: "", kind: "normal", media: [], context: {} };
  if (!isRecord(input)) {
    envelope.content = text(input);
    return envelope;
  }
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined) continue;
    switch (TYPED_NAMES.get(key) ?? key) {
      case "content":
        envelope.content = text(value);
        break;
      case "channel":
        envelope.channel = text(value);
        break;
      case "chatId":
        envelope.chatId = text(value);
        break;
      case "sessionId":
        if (value !== null && value !== "") envelope.sessionId = text(value);
        break;
      case "kind":
        if (isKind(value)) envelope.kind = value;
        break;
      case "media":
        if (Array.isArray(value)) envelope.media = value.filter(isMediaItem);
        break;
      case "context":
        if (isRecord(value)) envelope.context = { ...value };
        break;
      case "outputChannel":
        if (typeof value === "string" && value !== "") envelope.outputChannel = value;
        break;
      case "isActive":
        if (typeof value === "boolean") envelope.isActive = value;
        break;
      case "lifespan":
        if (isLifespan(value)) envelope.lifespan = value;
        break;
      case "tapeEnd":
        if (isTapeEnd(value)) envelope.tapeEnd = value;
        break;
      default:
        // A plugin's own field, kept as it is.
        Object.defineProperty(envelope, key, { value, writable: true, enumerable: true, configurable: true });
    }
  }
  return envelope;
}

/**
 * The envelope as the reference's snake_case JSON object (for the wire, `bub run --json`
 * and logs): typed fields under their wire names, extensions as they are; the lifespan and
 * media fetchers (not data) and the tape end (this process's own business) are left out.
 */
export function envelopeToJson(envelope: Envelope): Record<string, unknown> {
  const { content, channel, chatId, sessionId, kind, media, context, outputChannel, isActive, lifespan: _lifespan, tapeEnd: _tapeEnd, ...extensions } = envelope;
  const json: Record<string, unknown> = { ...extensions, content, channel, chat_id: chatId, kind, context };
  if (sessionId !== undefined) json.session_id = sessionId;
  if (outputChannel !== undefined) json.output_channel = outputChannel;
  if (isActive !== undefined) json.is_active = isActive;
  if (media.length > 0) json.media = media.map(({ dataFetcher: _fetcher, ...item }) => item);
  return json;
}

/** The thread within its session an envelope belongs to (`context.thread_id`), or null when it names none. */
export function threadIdOf(envelope: Envelope): string | null {
  const thread = envelope.context.thread_id;
  return thread === undefined || thread === null || thread === "" ? null : String(thread);
}

/** The channel replies to an envelope go to: its `outputChannel`, else its `channel`; null with neither. */
export function replyChannelOf(envelope: Envelope): string | null {
  const target = envelope.outputChannel || envelope.channel;
  return target === "" ? null : target;
}

/** Flattens a hook's outbound result: nothing → `[]`, an array → its items, else `[value]`. */
export function unpackBatch<T extends object>(batch: T | readonly T[] | null | undefined): T[] {
  if (batch === null || batch === undefined) return [];
  return isList(batch) ? [...batch] : [batch];
}

function isList<T>(value: T | readonly T[]): value is readonly T[] {
  return Array.isArray(value);
}

/** True when a prompt carries nothing: `""`, `[]`, `null` or `undefined`. */
export function isEmptyPrompt(prompt: Prompt | null | undefined): prompt is "" | [] | null | undefined {
  return prompt === null || prompt === undefined || prompt === "" || (Array.isArray(prompt) && prompt.length === 0);
}
