/**
 * Approval questions in `bub chat`: a tool call the approval policy holds is printed above
 * the prompt, the prompt turns into `allow <tool>? [y/N]`, and the next line typed answers
 * it (`y` or `yes` approves, anything else denies; the line is neither a message nor kept
 * in the history). Questions come one at a time. When stdin is not a terminal (piped input)
 * nobody is there to answer, so nothing is asked.
 */
import type { ApprovalAnswer, ApprovalRequest } from "../../kernel/approval.ts";
import type { Terminal } from "./terminal.ts";
import { escapeControlChars } from "../../kernel/terminal-text.ts";

/** What the questions need from the CLI channel. */
export interface CliApprovalUi {
  /** The running terminal, or null before start. */
  terminal(): Terminal | null;
  /** Puts the channel's own prompt back. */
  restorePrompt(): void;
}

/** Said when stdin is piped: the reason the policy puts in its tool error. */
export const NO_TERMINAL = "the chat's input is not a terminal";

/** A line that approves. */
function isYes(line: string): boolean {
  return /^(y|yes)$/i.test(line.trim());
}

/** Waits until `signal` aborts (resolves then), or forever. */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", () => resolve(), { once: true })));
}

/** See the module comment. */
export class CliApprovals {
  readonly #ui: CliApprovalUi;
  /** The open question: receives the answering line, or null when none will come. */
  #open: ((line: string | null) => void) | null = null;
  #queue: Promise<void> = Promise.resolve();

  constructor(ui: CliApprovalUi) {
    this.#ui = ui;
  }

  /** True while a question waits for its line. */
  get open(): boolean {
    return this.#open !== null;
  }

  /** Asks at the terminal; settles with a no when `signal` aborts. */
  async ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    const terminal = this.#ui.terminal();
    if (!terminal || terminal.closed) return { approved: false, unavailable: "the chat has ended" };
    if (terminal.input.isTTY !== true) return { approved: false, unavailable: NO_TERMINAL };
    const previous = this.#queue;
    const turn = Promise.withResolvers<void>();
    this.#queue = turn.promise;
    try {
      await Promise.race([previous, aborted(signal)]);
      if (signal.aborted || terminal.closed) return { approved: false };
      return await this.#question(terminal, request, signal);
    } finally {
      turn.resolve();
    }
  }

  async #question(terminal: Terminal, request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    // The command comes from the model: an escape sequence in it must not redraw what is asked.
    const summary = escapeControlChars(request.summary).split("\n").map((line) => `  ${line}`).join("\n");
    terminal.printAbove(`${terminal.style("yellow", escapeControlChars(`Approval needed: ${request.tool} ${request.reason}`))}\n${summary}`);
    terminal.setPrompt(`allow ${request.tool}? [y/N] `);
    const answered = Promise.withResolvers<string | null>();
    this.#open = answered.resolve;
    const onAbort = () => answered.resolve(null);
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      const line = await answered.promise;
      const approved = line !== null && isYes(line);
      const outcome = line === null ? "no answer: denied" : approved ? "approved" : "denied";
      if (!terminal.closed) terminal.printAbove(terminal.style("gray", `${request.tool}: ${outcome}`));
      return approved ? { approved: true, by: "terminal" } : { approved: false, by: line === null ? undefined : "terminal" };
    } finally {
      signal.removeEventListener("abort", onAbort);
      this.#open = null;
      if (!terminal.closed) this.#ui.restorePrompt();
    }
  }

  /** Hands a typed line to the open question; false when none is open (the line is a message then). */
  answer(line: string): boolean {
    const open = this.#open;
    if (!open) return false;
    this.#open = null;
    open(line);
    return true;
  }

  /** Input ended: an open question gets no answer (a no). */
  close(): void {
    const open = this.#open;
    this.#open = null;
    open?.(null);
  }
}
