/** Severity of a log record. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** Receives every log record the runtime writes. */
export type LogSink = (level: LogLevel, namespace: string, message: string, error?: unknown) => void;

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

function thresholdFromEnv(): number {
  const configured = process.env.BUB_LOG_LEVEL?.toLowerCase();
  if (configured && configured in ORDER) return ORDER[configured as LogLevel];
  return process.env.BUB_DEBUG ? ORDER.debug : ORDER.warn;
}

// Reading process.env costs about a microsecond; hot paths log (and filter) per message.
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

/**
 * Replaces where log records go (tests capture them; the REPL silences them while it owns
 * the terminal). Returns a function that restores the previous sink.
 */
export function setLogSink(next: LogSink | null): () => void {
  const previous = sink;
  sink = next ?? stderrSink;
  return () => {
    sink = previous;
  };
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
    debug: (message, error) => sink("debug", namespace, message, error),
    info: (message, error) => sink("info", namespace, message, error),
    warn: (message, error) => sink("warn", namespace, message, error),
    error: (message, error) => sink("error", namespace, message, error),
  };
}
