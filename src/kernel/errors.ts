/** The kinds of failure the runtime distinguishes; they travel on tapes and stream events. */
export type ErrorKind =
  | "invalid_input"
  | "config"
  | "provider"
  | "tool"
  | "temporary"
  | "timeout"
  | "not_found"
  | "unknown";

/** Named constants for {@link ErrorKind}, so callers can write `ErrorKind.TOOL`. */
export const ErrorKind = {
  INVALID_INPUT: "invalid_input",
  CONFIG: "config",
  PROVIDER: "provider",
  TOOL: "tool",
  TEMPORARY: "temporary",
  TIMEOUT: "timeout",
  NOT_FOUND: "not_found",
  UNKNOWN: "unknown",
} as const satisfies Record<string, ErrorKind>;

const KINDS: ReadonlySet<string> = new Set<string>(Object.values(ErrorKind));
const MARKER = Symbol.for("bub.error.BubError");

/** Plain-object form of a {@link BubError}, as written to tapes and `error` stream events. */
export interface BubErrorData {
  kind: ErrorKind;
  message: string;
  details?: Record<string, unknown>;
}

/** Narrows any string to a known {@link ErrorKind}, defaulting to `"unknown"`. */
export function toErrorKind(value: unknown): ErrorKind {
  return isErrorKind(value) ? value : "unknown";
}

/** True for one of the {@link ErrorKind} strings. */
export function isErrorKind(value: unknown): value is ErrorKind {
  return typeof value === "string" && KINDS.has(value);
}

/**
 * The runtime's own error: a kind, a message meant for people, and optional details.
 *
 * ```ts
 * throw new BubError("not_found", "Anchor 'x' was not found.");
 * ```
 */
export class BubError extends Error {
  readonly kind: ErrorKind;
  readonly details: Record<string, unknown> | undefined;
  readonly [MARKER] = true;

  constructor(kind: ErrorKind, message: string, options: { details?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "BubError";
    this.kind = kind;
    this.details = options.details && Object.keys(options.details).length > 0 ? options.details : undefined;
  }

  /** True for any BubError, even one created by another copy of this package. */
  static isInstance(value: unknown): value is BubError {
    return typeof value === "object" && value !== null && MARKER in value && value[MARKER] === true;
  }

  /** `{ kind, message }` plus `details` only when there are any. */
  toData(): BubErrorData {
    return this.details ? { kind: this.kind, message: this.message, details: this.details } : { kind: this.kind, message: this.message };
  }

  toJSON(): BubErrorData {
    return this.toData();
  }

  override toString(): string {
    return `[${this.kind}] ${this.message}`;
  }
}

/** A one-line description of any thrown value, for logs and error outbounds. */
export function describeError(error: unknown): string {
  if (BubError.isInstance(error)) return error.toString();
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}
