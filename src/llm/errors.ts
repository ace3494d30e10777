/**
 * Turns whatever a provider call threw into a {@link BubError} whose kind says what to do:
 * `temporary` (retry, then fall back), `timeout` (the model went silent: fall back),
 * `config` (fix settings), `provider` (the request was refused), plus a flag for
 * context-length failures so the agent can hand off and retry.
 */
import { BubError, describeError, type ErrorKind } from "../kernel/errors.ts";

/** Provider messages that mean "the prompt is longer than the model's context window". */
export const CONTEXT_LENGTH_PATTERN = /context.{0,20}(?:length|window)|maximum.{0,20}context|token.{0,10}limit|prompt.{0,10}too long|tokens? > \d+ maximum/i;

/**
 * True when an error (or message) says the prompt did not fit the model's context window:
 * a BubError flagged `details.context_length_exceeded`, or any error whose text matches
 * {@link CONTEXT_LENGTH_PATTERN}.
 */
export function isContextLengthError(error: unknown): boolean {
  if (BubError.isInstance(error) && error.details?.context_length_exceeded === true) return true;
  const text = typeof error === "string" ? error : describeError(error);
  return CONTEXT_LENGTH_PATTERN.test(text);
}

function hasAiSdkMarker(error: unknown, name: string): boolean {
  if (typeof error !== "object" || error === null) return false;
  return Reflect.get(error, Symbol.for(`vercel.ai.error.${name}`)) === true;
}

/** The fields of the AI SDK's `APICallError` this module reads. */
interface ApiCallErrorLike {
  message: string;
  statusCode?: number;
  responseHeaders?: Record<string, string>;
  responseBody?: string;
  isRetryable: boolean;
  cause?: unknown;
}

function isApiCallError(error: unknown): error is ApiCallErrorLike {
  return hasAiSdkMarker(error, "AI_APICallError");
}

const NETWORK_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "UND_ERR_CONNECT_TIMEOUT",
]);
const NETWORK_MESSAGES = ["terminated", "fetch failed", "other side closed", "socket hang up"];

/**
 * undici's codes for a response that sent nothing for the dispatcher's `headersTimeout`
 * (no status line and headers yet) or `bodyTimeout` (no body byte since the last one).
 */
const IDLE_TIMEOUT_CODES = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);

/** True when `test` holds for `error` or anything in its cause chain. */
function inCauseChain(error: unknown, test: (value: object) => boolean): boolean {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (typeof current === "object" && current !== null && !seen.has(current)) {
    seen.add(current);
    if (test(current)) return true;
    current = "cause" in current ? current.cause : undefined;
  }
  return false;
}

/** True for a dropped or refused connection anywhere in the cause chain. */
function isNetworkError(error: unknown): boolean {
  return inCauseChain(error, (value) => {
    if ("code" in value && typeof value.code === "string" && NETWORK_CODES.has(value.code)) return true;
    return "message" in value && typeof value.message === "string" && NETWORK_MESSAGES.includes(value.message.toLowerCase());
  });
}

/** True when the model's response went silent for longer than the idle timeout. */
export function isIdleTimeoutError(error: unknown): boolean {
  if (BubError.isInstance(error)) return error.kind === "timeout" && error.details?.idle_timeout === true;
  return inCauseChain(error, (value) => {
    return "code" in value && typeof value.code === "string" && IDLE_TIMEOUT_CODES.has(value.code);
  });
}

/** Maximum characters of a provider response body kept in error details. */
const BODY_LIMIT = 1000;

/**
 * Seconds to wait before retrying, from `retry-after-ms`, `retry-after` (seconds or an HTTP
 * date) or, for an already classified error, `details.retry_after`. Null when absent.
 */
export function retryAfterSeconds(error: unknown, now: () => number = Date.now): number | null {
  if (BubError.isInstance(error)) {
    const value = error.details?.retry_after;
    return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null;
  }
  if (!isApiCallError(error) || !error.responseHeaders) return null;
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(error.responseHeaders)) headers[key.toLowerCase()] = value;
  const milliseconds = Number(headers["retry-after-ms"]);
  if (headers["retry-after-ms"] !== undefined && Number.isFinite(milliseconds) && milliseconds >= 0) return milliseconds / 1000;
  const header = headers["retry-after"];
  if (header === undefined) return null;
  const seconds = Number(header);
  if (header.trim() !== "" && Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, (date - now()) / 1000);
}

function kindForStatus(status: number): ErrorKind {
  if (status === 408 || status === 409 || status === 425 || status === 429 || status >= 500) return "temporary";
  if (status === 401 || status === 403) return "config";
  return "provider";
}

function keyHint(model: string): string {
  const provider = model.split(/[:/]/, 1)[0] ?? "";
  const env = `BUB_${provider.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_API_KEY`;
  return ` Check the API key (${env} or BUB_API_KEY).`;
}

/** A stream error part is often the provider's JSON error object rather than an Error. */
function errorObjectMessage(value: object): string {
  if ("message" in value && typeof value.message === "string") return value.message;
  const nested = "error" in value ? value.error : undefined;
  if (typeof nested === "object" && nested !== null && "message" in nested && typeof nested.message === "string") return nested.message;
  return JSON.stringify(value);
}

/** The `code` of a provider's error object, or of the object under its `error` key. */
function errorObjectCode(value: object): unknown {
  if ("code" in value && value.code !== undefined && value.code !== null) return value.code;
  const nested = "error" in value ? value.error : undefined;
  return typeof nested === "object" && nested !== null && "code" in nested ? nested.code : undefined;
}

/** True for an event of the response stream that is not JSON, or not the shape of a chunk. */
export function isMalformedStreamError(error: unknown): boolean {
  return hasAiSdkMarker(error, "AI_JSONParseError") || hasAiSdkMarker(error, "AI_TypeValidationError");
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}

/** What {@link classifyModelError} may be told about the call. */
export interface ClassifyOptions {
  /** The idle timeout the call ran with (`model_idle_timeout_seconds`), named in its error. */
  readonly idleTimeoutSeconds?: number | null;
}

/**
 * Classifies a failure of a call to `model` (a full `provider:model` id).
 *
 * | failure | kind |
 * |---|---|
 * | HTTP 429, 408, 409, 5xx, network errors, connect timeouts | `temporary` (`details.retry_after` kept) |
 * | no byte from the server for the idle timeout | `timeout` (see {@link modelIdleTimeoutError}) |
 * | HTTP 401, 403, a missing key | `config` |
 * | HTTP 400, 404, 422 and other refusals | `provider` |
 * | an event of the stream that is not JSON (or not a chunk) | `provider`, one line, `details.malformed_stream` |
 *
 * Context-length failures keep their kind and add `details.context_length_exceeded`.
 */
export function classifyModelError(error: unknown, model: string, options: ClassifyOptions = {}): BubError {
  if (BubError.isInstance(error)) return error;
  if (isIdleTimeoutError(error)) return modelIdleTimeoutError(model, options.idleTimeoutSeconds ?? null, error);
  let kind: ErrorKind;
  let message: string;
  const details: Record<string, unknown> = { model };
  let bodyText = "";

  if (isApiCallError(error)) {
    bodyText = error.responseBody ?? "";
    const cause = error.cause;
    if (cause !== undefined && isNetworkError(cause)) {
      // The connection broke, possibly after a successful status line (a dropped stream).
      kind = "temporary";
      message = `${model}: the connection failed: ${describeError(cause)}`;
    } else if (typeof error.statusCode === "number") {
      details.status = error.statusCode;
      kind = kindForStatus(error.statusCode);
      message = `${model} returned HTTP ${error.statusCode}: ${error.message}`;
      if (kind === "config") message += `${/[.!?]$/.test(message) ? "" : "."}${keyHint(model)}`;
    } else {
      kind = error.isRetryable ? "temporary" : "provider";
      message = `${model} could not be reached: ${error.message}`;
    }
    const retryAfter = retryAfterSeconds(error);
    if (retryAfter !== null) details.retry_after = retryAfter;
    if (bodyText) details.body = bodyText.length > BODY_LIMIT ? `${bodyText.slice(0, BODY_LIMIT)}…` : bodyText;
  } else if (hasAiSdkMarker(error, "AI_LoadAPIKeyError") || hasAiSdkMarker(error, "AI_LoadSettingError")) {
    kind = "config";
    message = `${model}: ${describeError(error)}`;
  } else if (isNetworkError(error)) {
    kind = "temporary";
    message = `${model}: the connection failed: ${describeError(error)}`;
  } else if (typeof error === "object" && error !== null && !(error instanceof Error)) {
    // An error chunk inside the response stream, e.g. {"message": "...", "code": 502}.
    const code = Number(errorObjectCode(error));
    kind = Number.isFinite(code) && code > 0 ? kindForStatus(code) : "provider";
    message = `${model} reported an error: ${errorObjectMessage(error)}`;
    if (Number.isFinite(code) && code > 0) details.status = code;
  } else if (isMalformedStreamError(error)) {
    // A broken SSE event: one line for people, the parser's words kept in the details.
    kind = "provider";
    const colon = model.search(/[:/]/);
    const where = colon > 0 ? ` (provider ${model.slice(0, colon)}, model ${model.slice(colon + 1)})` : "";
    message = `${model}: the server sent a malformed event stream${where}`;
    details.malformed_stream = true;
    details.parse_error = oneLine(describeError(error)).slice(0, BODY_LIMIT);
  } else if (error instanceof Error && error.name.startsWith("AI_")) {
    kind = "provider";
    message = `${model}: ${describeError(error)}`;
  } else {
    kind = "unknown";
    message = `${model}: ${describeError(error)}`;
  }

  if (CONTEXT_LENGTH_PATTERN.test(message) || CONTEXT_LENGTH_PATTERN.test(bodyText)) details.context_length_exceeded = true;
  return new BubError(kind, message, { details, cause: error });
}

/** The error for a call that did not finish within `model_timeout_seconds`. */
export function modelTimeoutError(model: string, seconds: number): BubError {
  return new BubError("temporary", `${model} did not finish within ${seconds} s (BUB_MODEL_TIMEOUT_SECONDS); the call was aborted.`, {
    details: { model, timeout_seconds: seconds },
  });
}

/**
 * The error for a response that sent no byte for `model_idle_timeout_seconds`: kind
 * `timeout`, a message naming the model and the variable to raise, e.g.
 * `openai:gpt-4o-mini sent nothing for 120 s (BUB_MODEL_IDLE_TIMEOUT_SECONDS)`. It is not
 * retried on the same model; the fallback models are tried next.
 */
export function modelIdleTimeoutError(model: string, seconds: number | null, cause?: unknown): BubError {
  const span = seconds !== null && seconds > 0 ? `${seconds} s` : "longer than its idle timeout";
  return new BubError("timeout", `${model} sent nothing for ${span} (BUB_MODEL_IDLE_TIMEOUT_SECONDS)`, {
    details: { model, idle_timeout: true, ...(seconds !== null && seconds > 0 ? { timeout_seconds: seconds } : {}) },
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * The error that ends a turn whose prompt still overflowed the context window after the
 * automatic handoff: what happened and what to do, instead of the provider's raw 400
 * (kept in `details.provider_message`).
 */
export function contextOverflowError(model: string, cause: BubError | null): BubError {
  const details: Record<string, unknown> = { ...cause?.details, model, context_length_exceeded: true, after_auto_handoff: true };
  if (cause) details.provider_message = cause.message;
  return new BubError(
    "provider",
    `The prompt does not fit the context window of ${model}, even after the automatic handoff emptied the context ` +
      `(only the system prompt, the tools and this message were sent). Send a shorter message or fewer attachments, ` +
      `start a new session (,tape.reset, another chat, or --session-id), ` +
      `or switch to a model with a larger context (,model model_id=<provider:model> or BUB_MODEL).`,
    { details, ...(cause ? { cause } : {}) },
  );
}

/** One candidate's failure in a fallback chain. */
export interface CandidateFailure {
  readonly model: string;
  readonly error: BubError;
}

/**
 * The error raised when every candidate failed: the first candidate's kind, a message
 * listing each candidate's failure, and the list in `details.candidates`. A chain of one
 * returns that candidate's error unchanged.
 */
export function allCandidatesFailedError(failures: readonly CandidateFailure[]): BubError {
  const first = failures[0].error;
  if (failures.length === 1) return first;
  const lines = failures.map(({ model, error }, index) => `${index + 1}) ${model}: ${error.toString()}`);
  const details: Record<string, unknown> = {
    candidates: failures.map(({ model, error }) => ({ model, ...error.toData() })),
  };
  if (failures.some(({ error }) => error.details?.context_length_exceeded === true)) details.context_length_exceeded = true;
  return new BubError(first.kind, `All ${failures.length} model candidates failed:\n${lines.join("\n")}`, { details, cause: first });
}
