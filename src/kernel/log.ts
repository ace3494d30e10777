import { currentScope, runInScope } from "./async-scope.ts";

/** Severity of a log record. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** Receives every log record the runtime writes. */
export type LogSink = (level: LogLevel, namespace: string, message: string, error?: unknown) => void;

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

function isLogLevel(value: string | undefined): value is LogLevel {
  return value === "debug" || value === "info" || value === "warn" || value === "error";
}

function thresholdFromEnv(): number {
  const configured = process.env.BUB_LOG_LEVEL?.toLowerCase();
  if (isLogLevel(configured)) return ORDER[configured];
  return process.env.BUB_DEBUG ? ORDER.debug : ORDER.warn;
}

let threshold: number | null = null;

/** Re-reads BUB_LOG_LEVEL / BUB_DEBUG (call after changing them, e.g. after loading `.env`). */
export function refreshLogLevel(): void {
  threshold = null;
}

const stderrSink: LogSink = (level, namespace, message, error) => {
  if (ORDER[level] < (threshold ??= thresholdFromEnv())) return;
  let line = `${level.toUpperCase()} ${namespace} ${message}`;
  if (error !== undefined) {
    const detail = error instanceof Error ? (process.env.BUB_DEBUG ? (error.stack ?? error.message) : error.message) : String(error);
    line += `: ${detail}`;
  }
  process.stderr.write(line + "\n");
};

let sink: LogSink = stderrSink;

/** Where one framework's log records go; `sink: null` defers to the process-wide sink. */
export interface LogRoute {
  sink: LogSink | null;
}

/** Runs `body` with the records it logs (and everything it starts) going to `route`. */
export function withLogRoute<T>(route: LogRoute, body: () => T): T {
  return runInScope({ ...currentScope(), logRoute: route }, body);
}

function currentSink(): LogSink {
  return currentScope().logRoute?.sink ?? sink;
}

/**
 * Replaces the process-wide sink: where records go that no framework routes elsewhere
 * (tests capture them). Returns a function that restores the previous sink. A framework's
 * own sink is set with `framework.setLogSink()`.
 */
export function setLogSink(next: LogSink | null): () => void {
  const previous = sink;
  sink = next ?? stderrSink;
  return () => {
    sink = previous;
  };
}

/** Rewrites the text of a record before any sink sees it: the secrets redaction (src/config/redaction.ts) installs one. */
export type LogRedaction = (text: string) => string;

let redaction: LogRedaction | null = null;

/** Sets (or, with null, removes) the {@link LogRedaction} every record goes through. */
export function setLogRedaction(next: LogRedaction | null): void {
  redaction = next;
}

/** A record's error with its message, stack and causes redacted (the error itself when nothing changes). */
function redactedError(redact: LogRedaction, error: unknown, depth = 0): unknown {
  if (error === undefined) return error;
  if (!(error instanceof Error)) return typeof error === "string" ? redact(error) : error;
  const message = redact(error.message);
  const stack = error.stack === undefined ? undefined : redact(error.stack);
  const cause = depth < 8 ? redactedError(redact, error.cause, depth + 1) : error.cause;
  if (message === error.message && stack === error.stack && cause === error.cause) return error;
  const copy = new Error(message, cause === undefined ? undefined : { cause });
  copy.name = error.name;
  copy.stack = stack;
  return copy;
}

let recorder: LogSink | null = null;

/**
 * Sets (or, with null, removes) a sink that receives every record as well, whichever sink
 * a framework routes it to: the `bub` command line's log file. Returns a function that
 * restores the previous one.
 */
export function setLogRecorder(next: LogSink | null): () => void {
  const previous = recorder;
  recorder = next;
  return () => {
    recorder = previous;
  };
}

/** Sends a record to the current sink (and the recorder), redacted when a {@link LogRedaction} is set (docs/security.md, *Secrets*). */
function write(level: LogLevel, namespace: string, message: string, error: unknown): void {
  const redact = redaction;
  const text = redact ? redact(message) : message;
  const cause = redact ? redactedError(redact, error) : error;
  currentSink()(level, namespace, text, cause);
  recorder?.(level, namespace, text, cause);
}

/** A namespaced logger: `createLogger("bub:kernel").warn("hook.async_not_supported ...")`. */
export interface Logger {
  debug(message: string, error?: unknown): void;
  info(message: string, error?: unknown): void;
  warn(message: string, error?: unknown): void;
  error(message: string, error?: unknown): void;
}

/** A logger whose records carry `namespace`. */
export function createLogger(namespace: string): Logger {
  return {
    debug: (message, error) => write("debug", namespace, message, error),
    info: (message, error) => write("info", namespace, message, error),
    warn: (message, error) => write("warn", namespace, message, error),
    error: (message, error) => write("error", namespace, message, error),
  };
}
