/**
 * Renders one turn's stream on a {@link Terminal}: Markdown re-rendered live (throttled),
 * reasoning collapsed or expanded, one line per tool call, and a spinner whenever the turn
 * is waiting for the model. Text from the model, a tool or a command is shown with its
 * control characters escaped (`\x1b`), so an escape sequence in it is not obeyed by the terminal.
 */
import { stripVTControlCharacters } from "node:util";
import { isRecord } from "../../kernel/guards.ts";
import { escapeControlChars } from "../../kernel/terminal-text.ts";
import type { StreamEvent } from "../../kernel/stream.ts";
import type { ToolCallReporter } from "../../tools/reporting.ts";
import { formatToolCall, formatToolFailure, formatToolSuccess } from "./format.ts";
import { finishedPrefixLength, type MarkdownRenderer } from "./markdown.ts";
import type { Terminal } from "./terminal.ts";

/** Options of {@link TurnPrinter}. */
export interface TurnPrinterOptions {
  /** `command` output is shown as plain text; everything else as Markdown. */
  kind: string;
  expandThinking: boolean;
  /** Null in plain mode (text is written as it arrives). */
  markdown: MarkdownRenderer | null;
  /** Minimum time between two live re-renders. */
  throttleMs: number;
  /** The name to show for a tool (model-facing `fs_read` → runtime `fs.read`). */
  toolName?: (name: string) => string;
}

/** The spinner label while waiting for the model. */
export const SPINNER_LABEL = "Generating";

function parseArguments(raw: unknown): Record<string, unknown> {
  if (isRecord(raw)) return raw;
  if (typeof raw === "string" && raw.trim() !== "") {
    try {
      const parsed: unknown = JSON.parse(raw);
      if (isRecord(parsed)) return parsed;
    } catch {
      return { arguments: raw };
    }
  }
  return {};
}

function toolCallOf(call: Record<string, unknown>): { name: string; args: Record<string, unknown> } {
  const fn = isRecord(call.function) ? call.function : call;
  return { name: String(fn.name ?? call.name ?? "tool"), args: parseArguments(fn.arguments ?? call.arguments ?? call.args) };
}

/** See the module comment. Also the turn's {@link ToolCallReporter}. */
export class TurnPrinter implements ToolCallReporter {
  readonly #terminal: Terminal;
  readonly #options: TurnPrinterOptions;
  #buffer = "";
  #shown = false;
  #reasoningChars = 0;
  #reasoningText = "";
  #reasoningOpen = false;
  #timer: NodeJS.Timeout | null = null;
  #lastRender = 0;
  #toolCallsAt = 0;
  #eventCalls: Record<string, unknown>[] = [];
  #reportedStarts = 0;
  #finished = false;
  /** Tokens of the turn's model calls so far (the spinner shows them). */
  #tokens = 0;
  /** A command's output, shown once the command succeeded (a failure is shown as the turn's error). */
  #held = "";

  constructor(terminal: Terminal, options: TurnPrinterOptions) {
    this.#terminal = terminal;
    this.#options = options;
  }

  get #live(): boolean {
    return this.#terminal.interactive && this.#options.markdown !== null;
  }

  /** Starts the spinner. */
  begin(): void {
    this.#terminal.setSpinner(SPINNER_LABEL);
  }

  /** Renders one event; false when the event should not be passed on (leading whitespace). */
  handle(event: StreamEvent): boolean {
    switch (event.kind) {
      case "text": {
        const delta = escapeControlChars(String(event.data.delta ?? ""));
        if (this.#options.kind !== "command") return this.#text(delta);
        this.#held += delta;
        return true;
      }
      case "reasoning":
        this.#reasoning(escapeControlChars(String(event.data.delta ?? "")));
        return true;
      case "tool_call":
        this.#commit();
        this.#toolCallsAt = performance.now();
        this.#eventCalls = Array.isArray(event.data.tool_calls) ? event.data.tool_calls : [];
        this.#reportedStarts = 0;
        this.#terminal.setSpinner(SPINNER_LABEL);
        return true;
      case "tool_result":
        this.#toolResultFallback();
        return true;
      case "usage": {
        const { total_tokens: total, prompt_tokens: prompt, completion_tokens: completion } = event.data;
        const tokens = total ?? (prompt ?? 0) + (completion ?? 0);
        if (tokens > 0) this.#terminal.setTokens((this.#tokens += tokens));
        return true;
      }
      case "final":
        if (this.#held !== "" && event.data.ok !== false) this.#text(this.#held);
        this.#held = "";
        this.#commit();
        return true;
      default:
        return true;
    }
  }

  #text(delta: string): boolean {
    if (delta.trim() === "" && !this.#shown && this.#buffer === "" && this.#reasoningChars === 0 && !this.#reasoningOpen) return false;
    this.#closeReasoning();
    this.#shown = true;
    this.#terminal.setSpinner(null);
    if (!this.#live) {
      this.#terminal.writeStreamed(delta);
      this.#buffer += delta;
      return true;
    }
    this.#buffer += delta;
    this.#scheduleRender();
    return true;
  }

  #reasoning(delta: string): void {
    if (delta === "") return;
    if (!this.#options.expandThinking) {
      this.#reasoningChars += delta.length;
      return;
    }
    this.#terminal.setSpinner(null);
    if (!this.#reasoningOpen) {
      this.#reasoningOpen = true;
      if (!this.#live) this.#terminal.printAbove(this.#terminal.style("dim", "[-] Thinking"));
    }
    if (!this.#live) {
      this.#terminal.writeStreamed(this.#terminal.style("dim", delta));
      return;
    }
    this.#reasoningText += delta;
    this.#terminal.setLive(this.#terminal.style("dim", `[-] Thinking\n${this.#reasoningText}`));
  }

  /** Ends an expanded reasoning block, or prints the collapsed summary line. */
  #closeReasoning(): void {
    const style = this.#terminal.style;
    if (this.#reasoningOpen) {
      this.#reasoningOpen = false;
      if (this.#live) this.#terminal.commitLive(style("dim", `[-] Thinking\n${this.#reasoningText}`));
      else this.#terminal.endStreamed();
      this.#reasoningText = "";
    }
    if (this.#reasoningChars > 0) {
      this.#terminal.printAbove(style("dim", `[+] Thinking (${this.#reasoningChars} chars hidden)`));
      this.#reasoningChars = 0;
    }
  }

  #scheduleRender(): void {
    const elapsed = performance.now() - this.#lastRender;
    if (elapsed >= this.#options.throttleMs) {
      this.#render();
      return;
    }
    this.#timer ??= setTimeout(() => {
      this.#timer = null;
      this.#render();
    }, this.#options.throttleMs - elapsed);
  }

  #renderText(text: string): string {
    if (this.#options.kind === "command" || !this.#options.markdown) return text.replace(/\n+$/, "");
    const rendered = this.#options.markdown(text, this.#terminal.width);
    // marked-terminal colours on its own (it ignores NO_COLOR): keep only the layout.
    return this.#terminal.colored ? rendered : stripVTControlCharacters(rendered);
  }

  #render(): void {
    if (this.#finished || this.#buffer === "") return;
    this.#lastRender = performance.now();
    let rendered = this.#renderText(this.#buffer);
    // Keep the live region shorter than the screen: finished blocks go to the scrollback.
    if (rendered.split("\n").length > this.#terminal.height - 4) {
      const cut = finishedPrefixLength(this.#buffer);
      if (cut > 0) {
        this.#terminal.commitLive(this.#renderText(this.#buffer.slice(0, cut)));
        this.#buffer = this.#buffer.slice(cut);
        rendered = this.#renderText(this.#buffer);
      }
    }
    this.#terminal.setLive(rendered);
  }

  /** Moves whatever is live to the scrollback. */
  #commit(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#closeReasoning();
    if (this.#buffer === "") return;
    if (this.#live) this.#terminal.commitLive(this.#renderText(this.#buffer));
    else this.#terminal.endStreamed();
    this.#buffer = "";
  }

  /** Shows tool calls announced only by stream events (no reporter calls were made for them). */
  #toolResultFallback(): void {
    if (this.#reportedStarts > 0 || this.#eventCalls.length === 0) return;
    const elapsed = performance.now() - this.#toolCallsAt;
    for (const call of this.#eventCalls) {
      const { name, args } = toolCallOf(call);
      this.#terminal.printAbove(this.#terminal.style("magenta", escapeControlChars(formatToolCall(this.#options.toolName?.(name) ?? name, args))));
      this.#terminal.printAbove(this.#terminal.style("green", formatToolSuccess(elapsed)));
    }
    this.#eventCalls = [];
    this.#terminal.setSpinner(SPINNER_LABEL);
  }

  start(name: string, args: Readonly<Record<string, unknown>>): void {
    this.#commit();
    this.#reportedStarts++;
    this.#terminal.setSpinner(null);
    this.#terminal.printAbove(this.#terminal.style("magenta", escapeControlChars(formatToolCall(this.#options.toolName?.(name) ?? name, args))));
  }

  success(_name: string, _result: unknown, elapsedMs: number): void {
    this.#terminal.printAbove(this.#terminal.style("green", formatToolSuccess(elapsedMs)));
    this.#terminal.setSpinner(SPINNER_LABEL);
  }

  error(_name: string, error: unknown, elapsedMs: number): void {
    const { status, detail } = formatToolFailure(error, elapsedMs);
    // A failed command's message is the turn's error, shown once after this line.
    if (this.#options.kind === "command") this.#terminal.printAbove(this.#terminal.style("red", status));
    else this.#terminal.printAbove(`${this.#terminal.style("red", status)}\n${this.#terminal.style("gray", escapeControlChars(detail))}`);
    this.#terminal.setSpinner(SPINNER_LABEL);
  }

  /** The user interrupted: keep what was shown, say so. */
  interrupted(): void {
    this.#commit();
    this.#terminal.setSpinner(null);
    this.#terminal.printAbove(this.#terminal.style("yellow", "Interrupted."));
  }

  /** Commits what is left and stops the spinner. Safe to call twice. */
  finish(): void {
    if (this.#finished) return;
    if (this.#held !== "") this.#text(this.#held);
    this.#held = "";
    this.#commit();
    this.#finished = true;
    this.#terminal.setSpinner(null);
  }
}
