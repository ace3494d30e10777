/**
 * The CLI channel's terminal: one readline prompt plus, while a turn runs, a live region
 * (streamed answer, spinner, and the line being typed) redrawn in place with log-update.
 * Text printed "above" goes to the scrollback without disturbing either.
 *
 * In a dumb terminal or when output is piped everything is written as plain lines: no
 * escape sequences, no spinner, no live region.
 */
import { EventEmitter } from "node:events";
import { clearLine, createInterface, cursorTo, type Completer, type Interface } from "node:readline";
import { ansiStyle, formatErrorPanel, plainStyle, type Styler } from "./format.ts";
import { DISABLE_BRACKETED_PASTE, ENABLE_BRACKETED_PASTE } from "./input-lines.ts";
import { escapeControlChars } from "../../kernel/terminal-text.ts";

/** The output side of a terminal (process.stdout, or a test's fake). */
export type TerminalOutput = NodeJS.WritableStream & { isTTY?: boolean; columns?: number; rows?: number };
/** The input side of a terminal (process.stdin, or a test's fake). */
export type TerminalInput = NodeJS.ReadableStream & { isTTY?: boolean };

/** Options of {@link Terminal}. */
export interface TerminalOptions {
  input: TerminalInput;
  output: TerminalOutput;
  /** Where errors go when not interactive (default: `output`); `bub chat` passes process.stderr. */
  errorOutput?: NodeJS.WritableStream;
  env?: NodeJS.ProcessEnv;
  /** Force (or forbid) the live, coloured mode; default: output is a TTY and TERM is not dumb. */
  interactive?: boolean;
  /** Force colour on or off; default: interactive and NO_COLOR unset. */
  color?: boolean;
  /** Earlier inputs, newest first. */
  history?: string[];
  completer?: Completer;
}

const SPINNER_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏";
const SPINNER_INTERVAL_MS = 80;
const HIDE_CURSOR = "\u001B[?25l";
const SHOW_CURSOR = "\u001B[?25h";

type LiveUpdate = ((text: string) => void) & { clear(): void; done(): void; persist(text: string): void };

type WriteCallback = (error?: Error | null) => void;

/** Forwards readline's writes to the real output unless muted (while the live region owns the screen). */
class MutableOutput extends EventEmitter implements NodeJS.WritableStream {
  muted = false;
  writable = true;
  readonly #target: TerminalOutput;

  constructor(target: TerminalOutput) {
    super();
    this.#target = target;
    target.on?.("resize", () => this.emit("resize"));
  }

  write(chunk: string | Uint8Array, encoding?: BufferEncoding | WriteCallback, callback?: WriteCallback): boolean {
    if (!this.muted) this.#target.write(chunk);
    const done = typeof encoding === "function" ? encoding : callback;
    done?.();
    return true;
  }

  /** readline never ends its output, and ending this view must leave the terminal open: only a callback runs. */
  end(cb?: () => void): this;
  end(data: string | Uint8Array, cb?: () => void): this;
  end(str: string, encoding?: BufferEncoding, cb?: () => void): this;
  end(...args: unknown[]): this {
    const done = args.find((arg) => typeof arg === "function");
    if (typeof done === "function") done();
    return this;
  }

  get isTTY(): boolean {
    return this.#target.isTTY === true;
  }

  get columns(): number | undefined {
    return this.#target.columns;
  }

  get rows(): number | undefined {
    return this.#target.rows;
  }
}

/** See the module comment. */
export class Terminal {
  readonly interactive: boolean;
  /** Whether colour and text attributes are used. */
  readonly colored: boolean;
  readonly style: Styler;
  readonly input: TerminalInput;
  readonly output: TerminalOutput;
  readonly #rl: Interface;
  readonly #readlineOutput: MutableOutput;
  readonly #promptVisible: boolean;
  #live: LiveUpdate | null = null;
  #prompt = "> ";
  #promptActive = false;
  #busy = false;
  #body = "";
  #status: string | null = null;
  #spinnerIndex = 0;
  #spinnerTimer: NodeJS.Timeout | null = null;
  /** When the turn that owns the screen began (for the spinner's elapsed seconds). */
  #busySince = 0;
  /** The tokens the turn has used so far, when the provider reported them. */
  #tokens: number | null = null;
  /** Something went to the scrollback while busy: a blank line separates it from the next prompt. */
  #printedWhileBusy = false;
  #atLineStart = true;
  #closed = false;
  /** readline itself closed (Ctrl-D, end of input): nothing can be typed any more. */
  #inputClosed = false;
  /** Whether the terminal was asked to mark pastes (turned off again on close). */
  readonly #bracketedPaste: boolean;

  readonly #errorOutput: NodeJS.WritableStream;

  constructor(options: TerminalOptions) {
    const env = options.env ?? process.env;
    this.input = options.input;
    this.output = options.output;
    this.#errorOutput = options.errorOutput ?? options.output;
    this.interactive = options.interactive ?? (options.output.isTTY === true && env.TERM !== "dumb");
    const color = options.color ?? (this.interactive && !env.NO_COLOR);
    this.colored = color;
    this.style = color ? ansiStyle : plainStyle;
    this.#readlineOutput = new MutableOutput(options.output);
    const terminal = this.interactive && options.input.isTTY === true;
    this.#promptVisible = terminal || (options.input.isTTY === true && !this.interactive);
    this.#rl = createInterface({
      input: options.input,
      output: this.#readlineOutput,
      terminal,
      completer: options.completer,
      history: [...(options.history ?? [])],
      historySize: 1000,
      removeHistoryDuplicates: true,
      prompt: this.#prompt,
    });
    this.#rl.on("close", () => {
      this.#inputClosed = true;
      if (this.#busy) this.#redraw();
    });
    if (terminal) options.input.on("keypress", () => this.#onKeypress());
    // Pasted text then arrives between `paste-start` and `paste-end` keys (see ./input-lines.ts).
    this.#bracketedPaste = terminal;
    if (terminal) options.output.write(ENABLE_BRACKETED_PASTE);
  }

  get #canPrompt(): boolean {
    return this.#promptActive && this.#promptVisible && !this.#closed && !this.#inputClosed;
  }

  /** Loads log-update (interactive mode only); call once before the first turn. */
  async prepare(): Promise<void> {
    if (!this.interactive || this.#live) return;
    const { createLogUpdate } = await import("log-update");
    this.#live = createLogUpdate(this.output, { showCursor: true });
  }

  /** The readline interface: `line`, `SIGINT` and `close` events. */
  get readline(): Interface {
    return this.#rl;
  }

  /** Width to render for. */
  get width(): number {
    return Math.max(20, this.output.columns ?? 80);
  }

  /** Height of the screen (for keeping the live region shorter than it). */
  get height(): number {
    return Math.max(6, this.output.rows ?? 24);
  }

  get busy(): boolean {
    return this.#busy;
  }

  /** Changes the prompt label (redrawn at once when visible, unless `show` is false). */
  setPrompt(label: string, show = true): void {
    this.#prompt = label;
    this.#rl.setPrompt(this.interactive ? this.style("bold", label) : label);
    if (this.#busy) this.#redraw();
    else if (show && this.#canPrompt) this.#rl.prompt(true);
  }

  /** Shows the prompt and starts accepting input. */
  showPrompt(): void {
    if (this.#closed || this.#inputClosed) return;
    this.#promptActive = true;
    if (this.#busy) return;
    if (this.#promptVisible) this.#rl.prompt(true);
    else this.#rl.resume();
  }

  /** Clears what is typed on the current line. */
  clearInput(): void {
    if (this.#closed || this.#inputClosed) return;
    this.#rl.write(null, { ctrl: true, name: "u" });
    if (this.#busy) this.#redraw();
  }

  /** An error: a red panel in the scrollback when interactive, else `bub: <line>` lines on the error output; control characters escaped. */
  printError(raw: string): void {
    const text = escapeControlChars(raw);
    if (this.interactive) this.printAbove(formatErrorPanel(text, this.width, this.style, true));
    else this.#errorOutput.write(`${text.split("\n").map((line) => `bub: ${line}`).join("\n")}\n`);
  }

  /** Prints lines to the scrollback, above the prompt or live region. */
  printAbove(text: string): void {
    if (!this.interactive) {
      this.#writePlain(text);
      return;
    }
    if (this.#busy && this.#live && !this.#closed) {
      this.#printedWhileBusy = true;
      this.#live.persist(text);
      this.#redraw();
      return;
    }
    if (this.#canPrompt) {
      clearLine(this.output, 0);
      cursorTo(this.output, 0);
      this.output.write(`${text}\n`);
      this.#rl.prompt(true);
      return;
    }
    this.output.write(`${text}\n`);
  }

  #writePlain(text: string): void {
    this.output.write(`${this.#atLineStart ? "" : "\n"}${text}\n`);
    this.#atLineStart = true;
  }

  /** Plain mode: writes streamed text as it arrives. */
  writeStreamed(delta: string): void {
    if (delta === "") return;
    this.output.write(delta);
    this.#atLineStart = delta.endsWith("\n");
  }

  /** Ends a plain-mode streamed block with a newline when it lacks one. */
  endStreamed(): void {
    if (!this.#atLineStart) this.output.write("\n");
    this.#atLineStart = true;
  }

  /** Enters or leaves the state in which a turn owns the screen. */
  setBusy(busy: boolean): void {
    if (busy === this.#busy || this.#closed) return;
    this.#busy = busy;
    if (!this.interactive) {
      if (!busy && this.#canPrompt) this.#rl.prompt(true);
      return;
    }
    if (busy) {
      this.#readlineOutput.muted = true;
      this.output.write(HIDE_CURSOR);
      this.#status = null;
      this.#busySince = performance.now();
      this.#tokens = null;
      this.#printedWhileBusy = false;
      this.#redraw();
    } else {
      this.#stopSpinner();
      this.#body = "";
      this.#status = null;
      this.#live?.clear();
      this.#live?.done();
      // A blank line between the answer and the next prompt.
      this.output.write(this.#printedWhileBusy ? `${SHOW_CURSOR}\n` : SHOW_CURSOR);
      this.#readlineOutput.muted = false;
      if (this.#canPrompt) this.#rl.prompt(true);
    }
  }

  /** Sets the streamed part of the live region (interactive mode). */
  setLive(body: string): void {
    this.#body = body;
    if (this.#busy) this.#redraw();
  }

  /** Moves the live body to the scrollback (it is finished). */
  commitLive(text: string): void {
    this.#body = "";
    if (text !== "") this.printAbove(text);
    else if (this.#busy) this.#redraw();
  }

  /** Shows (a label) or hides (null) the spinner line of the live region. */
  setSpinner(label: string | null): void {
    if (!this.interactive) return;
    this.#status = label;
    if (label === null) this.#stopSpinner();
    else if (!this.#spinnerTimer) {
      this.#spinnerTimer = setInterval(() => {
        this.#spinnerIndex = (this.#spinnerIndex + 1) % SPINNER_FRAMES.length;
        this.#redraw();
      }, SPINNER_INTERVAL_MS);
      this.#spinnerTimer.unref();
    }
    if (this.#busy) this.#redraw();
  }

  /** The tokens the running turn has used so far, shown beside the spinner (null: not known). */
  setTokens(tokens: number | null): void {
    this.#tokens = tokens;
    if (this.#busy) this.#redraw();
  }

  /** The spinner line: the label, then the seconds since the turn began and the tokens when known. */
  #spinnerLine(label: string): string {
    const seconds = Math.floor((performance.now() - this.#busySince) / 1000);
    const tokens = this.#tokens === null ? "" : ` · ${this.#tokens.toLocaleString("en-US")} tokens`;
    return `${this.style("blue", `${SPINNER_FRAMES[this.#spinnerIndex]} ${label}`)} ${this.style("gray", `(${seconds}s${tokens})`)}`;
  }

  /** Whether the spinner is showing. */
  get spinning(): boolean {
    return this.#status !== null;
  }

  #stopSpinner(): void {
    if (this.#spinnerTimer) clearInterval(this.#spinnerTimer);
    this.#spinnerTimer = null;
  }

  #onKeypress(): void {
    if (this.#busy) this.#redraw();
  }

  #redraw(): void {
    if (!this.#busy || !this.#live || this.#closed) return;
    const parts: string[] = [];
    if (this.#body !== "") parts.push(this.#body);
    if (this.#status !== null) parts.push(this.#spinnerLine(this.#status));
    if (this.#promptActive && !this.#inputClosed) parts.push(`${this.style("bold", this.#prompt)}${this.#rl.line}${this.style("inverse", " ")}`);
    this.#live(parts.join("\n"));
  }

  /** Stops timers, clears the live region, restores the cursor and closes readline. */
  close(): void {
    if (this.#closed) return;
    this.#stopSpinner();
    if (this.#busy && this.#live) {
      if (this.#body !== "") this.#live.persist(this.#body);
      else this.#live.clear();
      this.#live.done();
      this.output.write(SHOW_CURSOR);
    }
    this.#busy = false;
    this.#readlineOutput.muted = false;
    this.#closed = true;
    this.#promptActive = false;
    if (this.#bracketedPaste) this.output.write(DISABLE_BRACKETED_PASTE);
    if (!this.#inputClosed) this.#rl.close();
  }

  get closed(): boolean {
    return this.#closed;
  }
}
