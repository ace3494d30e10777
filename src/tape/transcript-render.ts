/**
 * {@link Transcript}s as text for people: the terminal form `bub tape show` prints and the
 * Markdown `bub tape export --format markdown` writes. Both leave out the context line a
 * channel puts before each prompt (`sender_id=…|channel=…` and the date: the turn's header
 * has the date); `--json` and the JSONL export keep everything. Both show control
 * characters visibly (`\x1b`, never the character itself), so escape sequences that a tool's
 * output brought onto the tape are not replayed by the terminal (or the viewer) showing them.
 */
import type { Transcript, TranscriptItem, TranscriptTurn } from "./transcript.ts";
import { isRecord } from "../kernel/guards.ts";
import { escapeControlChars } from "../kernel/terminal-text.ts";

/** `sender_id=…|…` then `---Date: …---`, as the builtin plugin prefixes prompts. */
const PROMPT_CONTEXT = /^[^\n]*\n---Date: [^\n]*---\n/;

/** The readable text of a message's content: text parts joined, other parts named (`[image]`). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (content === null || content === undefined) return "";
  if (Array.isArray(content)) {
    return content
      .map((part) => {
        const value = isRecord(part) ? part : {};
        if (value.type === "text" && typeof value.text === "string") return value.text;
        return `[${typeof value.type === "string" ? value.type.replace(/_url$/, "") : "part"}]`;
      })
      .join("\n");
  }
  return JSON.stringify(content);
}

/** A user message without the channel's context line. */
function messageText(item: Extract<TranscriptItem, { type: "message" }>): string {
  const text = contentText(item.content);
  return item.role === "user" ? text.replace(PROMPT_CONTEXT, "") : text;
}

function outputText(output: unknown): string {
  return typeof output === "string" ? output : JSON.stringify(output, null, 2);
}

function compactJson(value: unknown, limit = 200): string {
  const text = JSON.stringify(value) ?? "";
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}

/** `2026-11-25 01:06:04 UTC` from an entry date. */
export function shortDate(date: string): string {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})/.exec(date);
  return match ? `${match[1]} ${match[2]} UTC` : date;
}

/** `0.4 s`, `12 s`, `3 min 5 s`. */
export function duration(ms: number): string {
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** `1 turn`, `2 turns`, `1,024 entries`. */
export function plural(count: number, word: string, many = `${word}s`): string {
  return `${groupDigits(count)} ${count === 1 ? word : many}`;
}

/** `1234567` as `1,234,567` (toLocaleString builds a formatter per call: too slow for 10,000 rows). */
export function groupDigits(count: number): string {
  return Number.isInteger(count) ? String(count).replace(/\B(?=(\d{3})+(?!\d))/g, ",") : String(count);
}

/** What a turn cost, on one line: time, model, model calls, tool calls, tokens. */
export function turnFigures(turn: TranscriptTurn): string {
  const parts = [shortDate(turn.start), duration(turn.durationMs)];
  if (turn.model) parts.push(turn.model);
  if (turn.modelCalls > 0) parts.push(plural(turn.modelCalls, "model call"));
  if (turn.toolCalls > 0) parts.push(plural(turn.toolCalls, "tool call"));
  if (turn.usage) parts.push(`${groupDigits(turn.usage.prompt_tokens)} in / ${groupDigits(turn.usage.completion_tokens)} out tokens`);
  return parts.join(" · ");
}

function turnTitle(turn: TranscriptTurn): string {
  return turn.number === null ? "Before the first turn" : `Turn ${turn.number}${turn.continued ? " (continued)" : ""}`;
}

/** Options of {@link renderTranscriptText}. */
export interface TextOptions {
  /** Longest message or tool output shown whole, in lines (default 20; `Infinity`: no limit). */
  maxLines?: number;
}

/** `text` cut to `maxLines` lines (and 100 characters a line on average), with a note of what was left out. */
function shorten(text: string, maxLines: number): string {
  if (!Number.isFinite(maxLines)) return text;
  const lines = text.split("\n");
  let kept = lines.slice(0, maxLines).join("\n");
  const maxChars = maxLines * 100;
  if (kept.length > maxChars) kept = kept.slice(0, maxChars);
  const hidden = text.length - kept.length;
  if (hidden <= 0) return text;
  const more = lines.length > maxLines ? `${plural(lines.length - maxLines, "more line")}` : `${plural(hidden, "more character")}`;
  return `${kept}\n… (${more}; --full shows everything)`;
}

const LABEL = 13;

function labelled(label: string, text: string): string {
  const pad = " ".repeat(2 + LABEL);
  const [first = "", ...rest] = text.split("\n");
  return [`  ${label.padEnd(LABEL)}${first}`, ...rest.map((line) => (line === "" ? "" : `${pad}${line}`))].join("\n");
}

function itemText(item: TranscriptItem, maxLines: number): string {
  switch (item.type) {
    case "anchor": {
      const state = item.state && Object.keys(item.state).some((key) => key !== "owner") ? ` ${compactJson(item.state)}` : "";
      return `  ── anchor ${item.name}${state} ── ${shortDate(item.date)}`;
    }
    case "message":
      return labelled(item.role, shorten(messageText(item), maxLines) + (item.incomplete ? "\n(incomplete: the stream was cut)" : ""));
    case "system":
      return labelled("system", `(system prompt, ${plural(item.content.length, "character")})`);
    case "tool_call":
      return labelled("tool call", `${item.name} ${shorten(item.arguments, maxLines)}`);
    case "tool_result":
      return labelled("tool result", `${item.name ?? "?"}: ${shorten(outputText(item.output), maxLines)}`);
    case "error":
      return labelled("error", `[${item.kind}] ${item.message}`);
    case "event": {
      const data = isRecord(item.data) ? item.data : {};
      if (item.name === "command") {
        return labelled("command", `,${String(data.raw ?? data.name ?? "")} (${String(data.status ?? "?")})\n${shorten(String(data.output ?? ""), maxLines)}`.trimEnd());
      }
      return labelled("event", `${item.name}${item.data === null ? "" : ` ${compactJson(item.data)}`}`);
    }
  }
}

/** The heading lines of a transcript: the session, its workspace, the tape and its size. */
function heading(transcript: Transcript): string[] {
  const session = transcript.sessionId === null ? "session unknown (not in the name index)" : `session ${transcript.sessionId}`;
  return [
    `${session}${transcript.workspace ? ` · workspace ${transcript.workspace}` : ""}`,
    `tape ${transcript.tape} · ${plural(transcript.entries, "entry", "entries")} · ${plural(transcript.turnCount, "turn")}`,
  ];
}

/**
 * The terminal form of a transcript: a heading, then each turn with its figures, turn id
 * and items, one per line (continuation lines indented); control characters other than
 * newline and tab written as `\xNN` ({@link escapeControlChars}).
 */
export function renderTranscriptText(transcript: Transcript, options: TextOptions = {}): string {
  const maxLines = options.maxLines ?? 20;
  const lines = heading(transcript);
  for (const turn of transcript.turns) {
    lines.push("");
    if (turn.number !== null || turn.continued) {
      lines.push(`${turnTitle(turn)} · ${turnFigures(turn)}`);
      if (turn.turnId) lines.push(`  turn_id ${turn.turnId}`);
    }
    for (const item of turn.items) lines.push(itemText(item, maxLines));
  }
  return escapeControlChars(`${lines.join("\n")}\n`);
}

/** A fenced code block whose fence is longer than any backtick run inside `text`. */
function fenced(text: string, language = ""): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((match) => match[0].length));
  const fence = "`".repeat(longest + 1);
  return `${fence}${language}\n${text}\n${fence}`;
}

/** Text safe inside Markdown inline code. */
function code(text: string): string {
  const clean = text.replace(/\n/g, " ");
  return clean.includes("`") ? `\`\` ${clean} \`\`` : `\`${clean}\``;
}

function itemMarkdown(item: TranscriptItem): string {
  switch (item.type) {
    case "anchor": {
      const state = item.state && Object.keys(item.state).some((key) => key !== "owner") ? `\n\n${fenced(JSON.stringify(item.state, null, 2), "json")}` : "";
      return `---\n\n**Anchor ${code(item.name)}** · ${shortDate(item.date)}${state}`;
    }
    case "message": {
      const role = item.role.charAt(0).toUpperCase() + item.role.slice(1);
      return `**${role}**${item.incomplete ? " _(incomplete: the stream was cut)_" : ""}\n\n${messageText(item)}`;
    }
    case "system":
      return `_System prompt (${plural(item.content.length, "character")})_\n\n<details><summary>System prompt</summary>\n\n${fenced(item.content)}\n\n</details>`;
    case "tool_call": {
      let args = item.arguments;
      try {
        args = JSON.stringify(JSON.parse(item.arguments), null, 2);
      } catch {
        // shown as the model wrote it
      }
      return `**Tool call** ${code(item.name)}${item.callId ? ` (${code(item.callId)})` : ""}\n\n${fenced(args, "json")}`;
    }
    case "tool_result":
      return `**Tool result** ${code(item.name ?? "?")}${item.callId ? ` (${code(item.callId)})` : ""}\n\n${fenced(outputText(item.output), typeof item.output === "string" ? "" : "json")}`;
    case "error":
      return `**Error** (${item.kind}): ${item.message}`;
    case "event":
      if (item.name === "command") {
        const data = isRecord(item.data) ? item.data : {};
        return `**Command** ${code(`,${String(data.raw ?? data.name ?? "")}`)} (${String(data.status ?? "?")})\n\n${fenced(String(data.output ?? ""))}`;
      }
      return `_Event ${code(item.name)}_${item.data === null ? "" : `\n\n${fenced(JSON.stringify(item.data, null, 2), "json")}`}`;
  }
}

/**
 * The Markdown form of a transcript: a title and a list of facts, then a section per turn
 * with its figures and items; tool arguments, results and the system prompt in code blocks.
 * Control characters are written as `\xNN`, as in {@link renderTranscriptText}.
 */
export function renderTranscriptMarkdown(transcript: Transcript, options: { exported?: string } = {}): string {
  const blocks: string[] = [`# Session ${transcript.sessionId === null ? code(transcript.tape) : code(transcript.sessionId)}`];
  const facts = [
    transcript.workspace ? `- Workspace: ${code(transcript.workspace)}` : null,
    `- Tape: ${code(transcript.tape)}`,
    `- Entries: ${groupDigits(transcript.entries)} · Turns: ${groupDigits(transcript.turnCount)}`,
    options.exported ? `- Exported: ${shortDate(options.exported)}` : null,
  ];
  blocks.push(facts.filter((fact) => fact !== null).join("\n"));
  for (const turn of transcript.turns) {
    if (turn.number !== null || turn.continued) {
      blocks.push(`## ${turnTitle(turn)}\n\n${turnFigures(turn)}${turn.turnId ? `\n\nTurn id ${code(turn.turnId)}` : ""}`);
    }
    for (const item of turn.items) blocks.push(itemMarkdown(item));
  }
  return escapeControlChars(`${blocks.join("\n\n")}\n`);
}
