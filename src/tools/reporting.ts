/**
 * Tool-call logging, or the turn's reporter in its place: a channel that renders the turn
 * (the CLI) sets `context.toolReporter` to show one line per tool call instead of log records.
 */
import { createLogger } from "../kernel/log.ts";
import type { ToolCallReporter } from "../kernel/turn-context.ts";

const log = createLogger("bub:tools");

export type { ToolCallReporter } from "../kernel/turn-context.ts";

/** JSON of a value for a log line, cut to `width` characters with its closing mark kept. */
export function renderLogValue(value: unknown, width = 100): string {
  let rendered: string;
  try {
    rendered = JSON.stringify(value) ?? String(value);
  } catch {
    rendered = String(value);
  }
  if (rendered.length <= width) return rendered;
  rendered = `${rendered.slice(0, width - 3)}...`;
  if (rendered.startsWith('"')) rendered += '"';
  else if (rendered.startsWith("{")) rendered += "}";
  else if (rendered.startsWith("[")) rendered += "]";
  return rendered;
}

/** `tool.call.start name=<n> { k=<json>, ... }`. */
export function toolCallStartLine(name: string, args: Readonly<Record<string, unknown>>): string {
  const params = Object.entries(args).map(([key, value]) => `${key}=${renderLogValue(value)}`);
  return `tool.call.start name=${name}${params.length > 0 ? ` { ${params.join(", ")} }` : ""}`;
}

async function safely(hook: string, run: () => void | Promise<void>): Promise<void> {
  try {
    await run();
  } catch (error) {
    log.warn(`tool.reporter_failed hook=${hook}`, error);
  }
}

/** Reports (or logs) the start of a tool call; a failing reporter is logged, never thrown. */
export async function reportToolStart(reporter: ToolCallReporter | undefined, name: string, args: Readonly<Record<string, unknown>>): Promise<void> {
  if (reporter) await safely("start", () => reporter.start(name, args));
  else log.info(toolCallStartLine(name, args));
}

/** Reports (or logs) a successful tool call. */
export async function reportToolSuccess(reporter: ToolCallReporter | undefined, name: string, result: unknown, elapsedMs: number): Promise<void> {
  if (reporter) await safely("success", () => reporter.success(name, result, elapsedMs));
  else log.info(`tool.call.success name=${name} elapsed_time=${elapsedMs.toFixed(2)}ms`);
}

/**
 * Reports (or logs) a failed tool call. A call stopped because its turn was cancelled
 * (`cancelled`) is logged at info level, not as an error.
 */
export async function reportToolError(reporter: ToolCallReporter | undefined, name: string, error: unknown, elapsedMs: number, cancelled = false): Promise<void> {
  if (reporter) await safely("error", () => reporter.error(name, error, elapsedMs));
  else if (cancelled) log.info(`tool.call.cancelled name=${name} elapsed_time=${elapsedMs.toFixed(2)}ms`, error);
  else log.error(`tool.call.error name=${name} elapsed_time=${elapsedMs.toFixed(2)}ms`, error);
}
