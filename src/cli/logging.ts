/**
 * Where the `bub` command line sends the runtime's log records: every record at or above
 * the file level to `<BUB_HOME>/logs/bub.log` (see {@link RotatingLogFile}), and warnings
 * and errors to stderr, except those of a turn outside `bub gateway`: a command's own
 * failure is one `bub: …` line on stderr, and the records that led to it (a retry, the turn
 * error itself) would only repeat it.
 */
import { join } from "node:path";
import { TRAFFIC_NAMESPACE } from "../channels/traffic.ts";
import { setLogRecorder, setLogSink, type LogLevel, type LogSink } from "../kernel/log.ts";
import { RotatingLogFile } from "./log-file.ts";

/** How long a record waits for others before the log file is written (one write per burst). */
const LOG_FILE_GATHER_MS = 20;

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

function isLogLevel(value: string): value is LogLevel {
  return Object.hasOwn(ORDER, value);
}

function levelOf(value: string | undefined): LogLevel | null {
  const level = value?.trim().toLowerCase();
  return level !== undefined && isLogLevel(level) ? level : null;
}

/** The `cause` of a thrown value, when it has one. */
function causeOf(error: unknown): unknown {
  return typeof error === "object" && error !== null && "cause" in error ? error.cause : undefined;
}

/** What decides the log levels of one `bub` command. */
export interface CliLogPolicy {
  /** The command that runs (`run`, `gateway`, ...), if known. */
  readonly command?: string;
  readonly env: NodeJS.ProcessEnv;
}

/** The lowest level shown on stderr: `BUB_LOG_LEVEL`, else debug with `BUB_DEBUG`, else warn. */
export function stderrLogLevel(env: NodeJS.ProcessEnv): LogLevel {
  return levelOf(env.BUB_LOG_LEVEL) ?? (env.BUB_DEBUG ? "debug" : "warn");
}

/**
 * Whether records logged during a turn reach stderr: for `bub gateway` (its stderr is its
 * running log), or when `BUB_LOG_LEVEL` or `BUB_DEBUG` asks for them. Else a command's
 * failure is its one `bub:` line, and the records that led to it (retries, the error
 * itself) go to the file only.
 */
export function turnRecordsOnStderr(policy: CliLogPolicy): boolean {
  return policy.command === "gateway" || levelOf(policy.env.BUB_LOG_LEVEL) !== null || Boolean(policy.env.BUB_DEBUG);
}

/**
 * Whether stderr shows the one line per message in and reply out (info records of
 * {@link TRAFFIC_NAMESPACE}) below its level: for `bub gateway`, unless `BUB_LOG_LEVEL` or
 * `BUB_DEBUG` chose the level.
 */
export function trafficOnStderr(policy: CliLogPolicy): boolean {
  return policy.command === "gateway" && levelOf(policy.env.BUB_LOG_LEVEL) === null && !policy.env.BUB_DEBUG;
}

/** The lowest level written to the log file: `BUB_LOG_LEVEL`, else debug with `BUB_DEBUG`, else info. */
export function fileLogLevel(env: NodeJS.ProcessEnv): LogLevel {
  return levelOf(env.BUB_LOG_LEVEL) ?? (env.BUB_DEBUG ? "debug" : "info");
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === "object" && error !== null) {
    try {
      return JSON.stringify(error);
    } catch {
      return String(error);
    }
  }
  return String(error);
}

/**
 * One record of the log file: `<ISO time> <LEVEL> <namespace> <message>: <error>`, then
 * the error's stack and each cause on indented lines.
 */
export function formatLogRecord(time: Date, level: LogLevel, namespace: string, message: string, error?: unknown): string {
  let text = `${time.toISOString()} ${level.toUpperCase()} ${namespace} ${message}`;
  if (error === undefined) return `${text}\n`;
  text += `: ${describe(error).replace(/\n/g, "\n    ")}`;
  const frames = error instanceof Error ? (error.stack?.split("\n").filter((line) => /^\s+at /.test(line)) ?? []) : [];
  for (const frame of frames) text += `\n    ${frame.trim()}`;
  let cause = causeOf(error);
  for (let depth = 0; cause !== undefined && cause !== null && depth < 8; depth++) {
    text += `\n  caused by: ${describe(cause).replace(/\n/g, "\n    ")}`;
    cause = causeOf(cause);
  }
  return `${text}\n`;
}

/** A record as stderr shows it: `<LEVEL> <namespace> <message>: <error>` (the stack too with BUB_DEBUG). */
function stderrRecord(level: LogLevel, namespace: string, message: string, error: unknown, env: NodeJS.ProcessEnv): string {
  let line = `${level.toUpperCase()} ${namespace} ${message}`;
  if (error !== undefined) line += `: ${error instanceof Error && env.BUB_DEBUG ? (error.stack ?? error.message) : describe(error)}`;
  return `${line}\n`;
}

/** What {@link installCliLogging} needs. */
export interface CliLogging extends CliLogPolicy {
  /** BUB_HOME: the file is `<home>/logs/bub.log`. */
  readonly home: string;
  readonly stderr: { write(text: string): unknown };
  /** Size and count of the log files (tests). */
  readonly maxBytes?: number;
  readonly files?: number;
  /** Where the process's `exit` event is listened to (default `process`; tests pass their own). */
  readonly exitEvents?: ExitEvents;
}

/** The part of `process` that tells of its `exit`. */
export interface ExitEvents {
  on(event: "exit", listener: () => void): unknown;
  off(event: "exit", listener: () => void): unknown;
}

/**
 * Installs the command line's log sinks: the log file as the recorder of every record (it
 * is created at the first record), stderr as the process-wide sink (see
 * {@link stderrLogLevel}). Returns the file, to flush; `turnSink`, the sink for the
 * framework's own records (those of its turns), when they must not reach stderr (see
 * {@link turnRecordsOnStderr}); and a function that uninstalls both. Until then, an `exit`
 * of the process (a `process.exit()` on a second Ctrl-C) appends the records still queued
 * synchronously ({@link RotatingLogFile.writeQueuedSync}), so they are not lost.
 */
export function installCliLogging(options: CliLogging): { file: RotatingLogFile; turnSink: LogSink | null; restore: () => void } {
  const file = new RotatingLogFile(join(options.home, "logs", "bub.log"), { maxBytes: options.maxBytes, files: options.files, gatherMs: LOG_FILE_GATHER_MS });
  const fileAt = ORDER[fileLogLevel(options.env)];
  const recorder: LogSink = (level, namespace, message, error) => {
    if (ORDER[level] >= fileAt) file.append(formatLogRecord(new Date(), level, namespace, message, error));
  };
  const stderrAt = ORDER[stderrLogLevel(options.env)];
  const traffic = trafficOnStderr(options);
  const sink: LogSink = (level, namespace, message, error) => {
    const shown = ORDER[level] >= stderrAt || (traffic && level === "info" && namespace === TRAFFIC_NAMESPACE);
    if (shown) options.stderr.write(stderrRecord(level, namespace, message, error, options.env));
  };
  const restoreRecorder = setLogRecorder(recorder);
  const restoreSink = setLogSink(sink);
  const exitEvents = options.exitEvents ?? process;
  const onExit = () => file.writeQueuedSync();
  exitEvents.on("exit", onExit);
  return {
    file,
    turnSink: turnRecordsOnStderr(options) ? null : () => {},
    restore: () => {
      exitEvents.off("exit", onExit);
      restoreSink();
      restoreRecorder();
    },
  };
}
