/**
 * Pure text formatting for the CLI channel: the welcome block, tool-call lines, the error
 * panel and the prompt label. Nothing here writes to a terminal.
 */
import { styleText } from "node:util";

/** Colours a piece of text (or leaves it plain when colour is off). */
export type Styler = (format: Parameters<typeof styleText>[0], text: string) => string;

/** A styler that returns text unchanged, for dumb terminals and pipes. */
export const plainStyle: Styler = (_format, text) => text;

/** A styler that always colours (the caller decided colour is wanted). */
export const ansiStyle: Styler = (format, text) => styleText(format, text, { validateStream: false });

/** The longest a single argument or error payload may be before it is cut. */
export const MAX_TOOL_VALUE_CHARS = 800;
const MAX_TOOL_PAYLOAD_CHARS = 4000;
const MAX_TOOL_CALL_CHARS = 1200;
const INLINE_CALL_WIDTH = 120;

/** Cuts `text` to `maxChars`, saying how much was dropped. */
export function truncate(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const omitted = text.length - maxChars;
  const suffix = `\n... truncated ${omitted} chars`;
  return text.slice(0, Math.max(0, maxChars - suffix.length)).trimEnd() + suffix;
}

function json(value: unknown, indent?: number): string {
  try {
    return JSON.stringify(value, (_key, item: unknown) => (typeof item === "bigint" ? item.toString() : item), indent) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * `● fs.read(path: "README.md")`: one line for a short call, one argument per line for a
 * long one; each value is JSON, cut when it is very long.
 */
export function formatToolCall(name: string, args: Readonly<Record<string, unknown>>): string {
  const params = Object.entries(args).map(([key, value]) => `${key}: ${truncate(json(value), MAX_TOOL_VALUE_CHARS)}`);
  if (params.length === 0) return `● ${name}()`;
  const inline = `● ${name}(${params.join(", ")})`;
  if (inline.length <= INLINE_CALL_WIDTH && !inline.includes("\n")) return inline;
  return truncate(`● ${name}(\n${params.map((param) => `  ${param},`).join("\n")}\n)`, MAX_TOOL_CALL_CHARS);
}

/** `  ⎿ completed in 12 ms`. */
export function formatToolSuccess(elapsedMs: number): string {
  return `  ⎿ completed in ${Math.round(elapsedMs)} ms`;
}

/** `  ⎿ failed in 12 ms` followed by the error as an indented JSON `{type, message}` block. */
export function formatToolFailure(error: unknown, elapsedMs: number): { status: string; detail: string } {
  const payload =
    error instanceof Error
      ? { type: error.name || error.constructor.name, message: error.message }
      : typeof error === "object" && error !== null && "message" in error
        ? { type: String(("type" in error ? error.type : undefined) ?? ("kind" in error ? error.kind : undefined) ?? "Error"), message: String(error.message) }
        : { type: "Error", message: String(error) };
  const detail = truncate(json(payload, 2), MAX_TOOL_PAYLOAD_CHARS)
    .split("\n")
    .map((line) => `    ${line}`)
    .join("\n");
  return { status: `  ⎿ failed in ${Math.round(elapsedMs)} ms`, detail };
}

/**
 * `line` cut into lines of at most `width` characters at spaces, never inside a word; only
 * a word longer than a whole line (a URL, a path) is cut, at the width.
 */
export function wrapWords(line: string, width: number): string[] {
  if (line.length <= width) return [line.trimEnd()];
  const lines: string[] = [];
  let current = "";
  const words = line.trimStart().split(/ +/);
  words[0] = line.slice(0, line.length - line.trimStart().length) + words[0];
  for (const word of words) {
    let rest = word;
    if (current !== "" && current.length + 1 + rest.length <= width) {
      current += ` ${rest}`;
      continue;
    }
    if (current !== "") lines.push(current);
    while (rest.length > width) {
      lines.push(rest.slice(0, width));
      rest = rest.slice(width);
    }
    current = rest;
  }
  if (current !== "" || lines.length === 0) lines.push(current);
  return lines;
}

/** A box around `body` with `title` in the top border, at most `width` columns wide. */
export function formatPanel(title: string, body: string, width: number, style: Styler, color: "red" | "cyan" | "blue"): string {
  const inner = Math.max(20, Math.min(width, 100) - 4);
  const lines = body.split("\n").flatMap((raw) => wrapWords(raw, inner));
  const top = style(color, `╭─ ${title} ${"─".repeat(Math.max(0, inner - title.length - 1))}╮`);
  const bottom = style(color, `╰${"─".repeat(inner + 2)}╯`);
  const side = style(color, "│");
  return [top, ...lines.map((line) => `${side} ${line.padEnd(inner)} ${side}`), bottom].join("\n");
}

/** The error panel for a `kind=error` outbound; plain `error: ...` lines without colour. */
export function formatErrorPanel(text: string, width: number, style: Styler, interactive: boolean): string {
  if (!interactive) return text.split("\n").map((line) => `error: ${line}`).join("\n");
  return formatPanel("error", text, width, style, "red");
}

/** What the welcome block says. */
export interface WelcomeInfo {
  workspace: string;
  model: string;
}

/** The welcome block: workspace, model and how commands work. */
export function formatWelcome(info: WelcomeInfo, width: number, style: Styler, interactive: boolean): string {
  const body = [
    `workspace: ${info.workspace}`,
    `model: ${info.model}`,
    "internal command prefix: ','",
    "shell command prefix: ',' at line start (Ctrl-X for shell mode)",
    "type ',help' for command list, ',quit' to leave",
  ].join("\n");
  if (!interactive) return `Bub\n${body}`;
  return formatPanel("Bub", body, width, style, "cyan");
}

/** Agent mode sends lines to the model; shell mode turns every line into a comma command. */
export type CliMode = "agent" | "shell";

/** `"<workspace name> > "` in agent mode, `"<workspace name> , "` in shell mode. */
export function promptLabel(workspaceName: string, mode: CliMode): string {
  return `${workspaceName} ${mode === "agent" ? ">" : ","} `;
}
