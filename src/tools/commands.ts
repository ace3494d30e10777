/**
 * Comma command mode (spec §7.3): a line starting with `,` runs one tool directly —
 * `,fs.read path=README.md`, `,tape.info` — with shell-style quoting. A name that is no tool
 * runs the whole line through `bash` (`,git status`).
 *
 * Departures from the reference: `_` aliases are accepted (`,fs_read`, §15.8), and a failing
 * command never throws: its `command` event is still recorded and the caller gets
 * `ok: false` to turn into an error outbound (§15.7).
 */
import { isRecord } from "../kernel/guards.ts";
import { BubError, describeError } from "../kernel/errors.ts";
import { createLogger } from "../kernel/log.ts";
import type { TapeHandle } from "../kernel/tape-contract.ts";
import { utcNow } from "../tape/date.ts";
import { invokeTool } from "./executor.ts";
import type { ToolRegistry } from "./registry.ts";
import { splitShellWords } from "./shell-words.ts";
import type { Tool, ToolContext } from "./tool.ts";

const log = createLogger("bub:tools");

/** Run id given to tools run as comma commands. */
export const COMMAND_RUN_ID = "run_command";

/** The outcome of one comma command. */
export interface CommaCommandResult {
  /** False when the command failed; `output` then holds the error text. */
  readonly ok: boolean;
  readonly output: string;
}

/** Arguments of a command: positional words first, then `key=value` words. */
export interface CommandArguments {
  readonly positional: string[];
  readonly keywords: Record<string, string>;
}

/** True when a prompt is a comma command: a string whose trimmed text starts with `,`. */
export function isCommaCommand(prompt: unknown): prompt is string {
  return typeof prompt === "string" && prompt.trim().startsWith(",");
}

/**
 * Splits argument words into positional and `key=value` ones (split at the first `=`).
 * @throws BubError `invalid_input` for a positional word after a keyword.
 */
export function parseCommandArguments(words: readonly string[]): CommandArguments {
  const positional: string[] = [];
  const keywords: Record<string, string> = {};
  let sawKeyword = false;
  for (const word of words) {
    const equals = word.indexOf("=");
    if (equals >= 0) {
      keywords[word.slice(0, equals)] = word.slice(equals + 1);
      sawKeyword = true;
    } else if (sawKeyword) {
      throw new BubError("invalid_input", `positional argument '${word}' cannot appear after keyword arguments`);
    } else {
      positional.push(word);
    }
  }
  return { positional, keywords };
}

/** The JSON types a parameter schema allows, `anyOf`/`oneOf` members included. */
function schemaTypes(schema: unknown): Set<string> {
  const types = new Set<string>();
  if (!isRecord(schema)) return types;
  const type = schema.type;
  if (typeof type === "string") types.add(type);
  else if (Array.isArray(type)) for (const item of type) if (typeof item === "string") types.add(item);
  for (const key of ["anyOf", "oneOf"]) {
    const members = schema[key];
    if (Array.isArray(members)) for (const member of members) for (const item of schemaTypes(member)) types.add(item);
  }
  return types;
}

const TRUE_WORDS = new Set(["true", "1", "yes", "on"]);
const FALSE_WORDS = new Set(["false", "0", "no", "off"]);

/** A command word converted to what the parameter's schema expects (numbers, booleans, lists, null). */
function coerce(value: string, schema: unknown): unknown {
  const types = schemaTypes(schema);
  if (types.size === 0 || types.has("string")) return value;
  const lowered = value.trim().toLowerCase();
  if (types.has("null") && (lowered === "null" || lowered === "none")) return null;
  if ((types.has("integer") || types.has("number")) && /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(value.trim())) return Number(value);
  if (types.has("boolean")) {
    if (TRUE_WORDS.has(lowered)) return true;
    if (FALSE_WORDS.has(lowered)) return false;
  }
  if (types.has("array") || types.has("object")) {
    try {
      return JSON.parse(value);
    } catch {
      if (types.has("array")) return value.split(",").map((item) => item.trim()).filter(Boolean);
    }
  }
  return value;
}

/**
 * The tool's arguments object: positional words fill the parameters in schema order.
 * @throws BubError `invalid_input` for too many positional words or a parameter given twice.
 */
export function commandArguments(tool: Tool, parsed: CommandArguments): Record<string, unknown> {
  const properties = isRecord(tool.inputSchema.properties) ? tool.inputSchema.properties : {};
  const order = Object.keys(properties);
  if (parsed.positional.length > order.length) {
    const expected = order.length === 0 ? "no arguments" : `at most ${order.length} (${order.join(", ")})`;
    throw new BubError("invalid_input", `too many positional arguments for '${tool.name}': it takes ${expected}`);
  }
  const args: Record<string, unknown> = {};
  parsed.positional.forEach((value, index) => {
    const key = order[index];
    args[key] = coerce(value, properties[key]);
  });
  for (const [key, value] of Object.entries(parsed.keywords)) {
    if (key in args) throw new BubError("invalid_input", `argument '${key}' is given twice`);
    args[key] = coerce(value, properties[key]);
  }
  return args;
}

function errorText(error: unknown): string {
  if (!BubError.isInstance(error)) return describeError(error);
  const issues = error.details?.errors;
  if (!Array.isArray(issues) || issues.length === 0) return error.message;
  const lines = issues.map((issue) => {
    const path = isRecord(issue) ? issue.path : undefined;
    const message = isRecord(issue) ? issue.message : undefined;
    return `- ${String(path ?? "(root)")}: ${String(message ?? "")}`;
  });
  return `${error.message}\n${lines.join("\n")}`;
}

function outputText(result: unknown): string {
  if (typeof result === "string") return result;
  if (result === undefined || result === null) return "";
  if (typeof result === "object") {
    try {
      return JSON.stringify(result);
    } catch {
      return String(result);
    }
  }
  return String(result);
}

/** The context's tape, unless a hand-built context left it out. */
function eventTape(tape: TapeHandle | null | undefined): TapeHandle | null {
  return typeof tape?.appendEvent === "function" ? tape : null;
}

/**
 * Runs one comma command line (with or without its leading `,`) and records a `command`
 * event `{raw, name, status, elapsed_ms, output, date}` on `context.tape`. Tools run without
 * interception hooks or spilling, with run id `run_command`. Never throws for a failing
 * command; only a cancelled `context.signal` rejects.
 *
 * ```ts
 * const { ok, output } = await runCommaCommand(",fs.read path=README.md", { tools, context: { tape, runId: "", state } });
 * ```
 */
export async function runCommaCommand(line: string, options: { tools: ToolRegistry; context: ToolContext }): Promise<CommaCommandResult> {
  const { tools } = options;
  const context: ToolContext = { ...options.context, runId: COMMAND_RUN_ID };
  let body = line.trim();
  if (body.startsWith(",")) body = body.slice(1).trim();
  const started = performance.now();
  let name = "";
  let ok = true;
  let output: string;
  try {
    if (!body) throw new BubError("invalid_input", "empty command: type ,help to list the commands");
    name = body.split(/\s/, 1)[0];
    const words = splitShellWords(body);
    name = words[0] ?? "";
    const runtimeName = tools.resolveToolName(name);
    if (runtimeName === null) {
      const bash = tools.get("bash");
      if (!bash) throw new BubError("not_found", `unknown command '${name}' (and no bash tool to run it as a shell command)`);
      output = outputText(await invokeTool(bash, { cmd: body }, context));
    } else {
      name = runtimeName;
      const tool = tools.get(runtimeName);
      if (!tool) throw new BubError("not_found", `tool '${runtimeName}' is no longer registered`);
      const args = commandArguments(tool, parseCommandArguments(words.slice(1)));
      output = outputText(await invokeTool(tool, args, context));
    }
  } catch (error) {
    if (context.signal?.aborted && !BubError.isInstance(error)) {
      await record(context, { raw: body, name, status: "error", started, output: describeError(error) });
      throw error;
    }
    ok = false;
    output = errorText(error);
  }
  await record(context, { raw: body, name, status: ok ? "ok" : "error", started, output });
  return { ok, output };
}

async function record(context: ToolContext, event: { raw: string; name: string; status: string; started: number; output: string }): Promise<void> {
  const tape = eventTape(context.tape);
  if (!tape) {
    log.warn(`command.event_skipped name=${event.name}: the context has no tape`);
    return;
  }
  const data = {
    raw: event.raw,
    name: event.name,
    status: event.status,
    elapsed_ms: Math.trunc(performance.now() - event.started),
    output: event.output,
    date: utcNow(),
  };
  try {
    await tape.appendEvent("command", data);
  } catch (error) {
    log.warn(`command.event_failed name=${event.name}`, error);
  }
}
