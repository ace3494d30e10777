/**
 * The `cli` channel: an interactive REPL that sends each line as a turn and renders the
 * turn's stream live. Lines typed while a turn runs steer it; Ctrl-C interrupts the turn,
 * not the REPL; `,quit`, `,exit` and Ctrl-D leave; Ctrl-X toggles shell mode.
 */
import { basename } from "node:path";
import type { LogSink } from "../../kernel/log.ts";
import type { Envelope } from "../../kernel/envelope.ts";
import type { AsyncStreamEvents, StreamEvent } from "../../kernel/stream.ts";
import type { TurnContext } from "../../kernel/turn-context.ts";
import type { AdmitDecision, Channel, MessageHandler, TurnSnapshot } from "../../kernel/types.ts";
import type { ApprovalAnswer, ApprovalRequest } from "../../kernel/approval.ts";
import { ChannelMessage } from "../message.ts";
import { CliApprovals } from "./approval.ts";
import { completeCommand, displayToolName } from "./completion.ts";
import { formatWelcome, promptLabel, type CliMode } from "./format.ts";
import { appendHistory, historyFile, loadHistory } from "./history.ts";
import { InFlightTurns } from "./in-flight.ts";
import { MessageAssembler, SerialMessages } from "./input-lines.ts";
import { TurnModel } from "./turn-model.ts";
import { LiveRendering, printTurn } from "./render-turn.ts";
import type { CliChannelOptions, CliFramework } from "./options.ts";
import { Terminal } from "./terminal.ts";
import { SPINNER_LABEL, TurnPrinter } from "./turn-printer.ts";

const LEAVE_COMMANDS = new Set([",quit", ",exit"]);
const CONTINUATION_PROMPT = "... ";
const STEER_REASON = "cli session is already generating";
/** What a Ctrl-C on an empty prompt says (a second one leaves). */
export const QUIT_HINT = "(press Ctrl-C again or Ctrl-D to quit, or type ,quit)";

/** See the module comment. Build it with {@link createCliChannel}. */
export class CliChannel implements Channel {
  readonly name = "cli";
  readonly kind = "interface" as const;
  readonly needsDebounce = false;
  readonly enabled = true;
  readonly #framework: CliFramework;
  readonly #options: CliChannelOptions;
  #handler: MessageHandler | null;
  #sessionId: string;
  #chatId: string;
  #mode: CliMode = "agent";
  #expandThinking = false;
  #terminal: Terminal | null = null;
  readonly #rendering = new LiveRendering();
  readonly #turns = new InFlightTurns((busy) => this.#showBusy(busy));
  readonly #approvals = new CliApprovals({ terminal: () => this.#terminal, restorePrompt: () => this.#terminal?.setPrompt(this.#label()) });
  #restoreLogs: (() => void) | null = null;
  #history: string | null = null;
  #historyWrites: Promise<void> = Promise.resolve();
  #leaving = false;
  readonly #input = new MessageAssembler();
  /** Piped input only: each message waits for the turn before it. */
  #serial: SerialMessages | null = null;
  #turnModel: TurnModel;
  /** A Ctrl-C with nothing to cancel was pressed: the next one leaves. */
  #quitArmed = false;
  #stopping = false;
  #started: Promise<void> | null = null;
  #exited!: Promise<void>;
  #resolveExited!: () => void;

  constructor(framework: CliFramework, options: CliChannelOptions = {}) {
    this.#framework = framework;
    this.#options = options;
    this.#handler = options.messageHandler ?? null;
    this.#sessionId = options.sessionId ?? "cli_session";
    this.#chatId = options.chatId ?? "cli_chat";
    this.#exited = new Promise((resolve) => (this.#resolveExited = resolve));
    this.#turnModel = new TurnModel(options.turnModel);
  }

  /** Sets where submitted lines go (the channel manager does this). */
  setMessageHandler(handler: MessageHandler): void {
    this.#handler = handler;
  }

  /** Overrides the session and chat ids of the messages this channel sends (undefined keeps them). */
  setMetadata(ids: { sessionId?: string | null; chatId?: string | null }): void {
    if (ids.sessionId) this.#sessionId = ids.sessionId;
    if (ids.chatId) this.#chatId = ids.chatId;
  }

  get sessionId(): string {
    return this.#sessionId;
  }

  get chatId(): string {
    return this.#chatId;
  }

  get mode(): CliMode {
    return this.#mode;
  }

  get expandThinking(): boolean {
    return this.#expandThinking;
  }

  /** True while a submitted turn has not finished. */
  get busy(): boolean {
    return this.#turns.busy;
  }

  /** Resolves when the person has left the REPL (or the channel was stopped). */
  get exited(): Promise<void> {
    return this.#exited;
  }

  /** Resolves once no turn is running. */
  whenIdle(): Promise<void> {
    return this.#turns.whenIdle();
  }

  #label(): string {
    return promptLabel(basename(this.#framework.workspace) || this.#framework.workspace, this.#mode);
  }

  start(signal: AbortSignal): Promise<void> {
    this.#started ??= this.#start(signal);
    return this.#started;
  }

  async #start(signal: AbortSignal): Promise<void> {
    const options = this.#options;
    const env = options.env ?? process.env;
    if (options.silenceLogs !== false) this.#restoreLogs = this.#framework.setLogSink(this.#logSink(env));
    this.#history = options.historyFile === undefined ? historyFile(this.#framework.home, this.#framework.workspace) : options.historyFile;
    const past = this.#history ? await loadHistory(this.#history).catch(() => []) : [];
    const terminal = new Terminal({
      input: options.input ?? process.stdin,
      output: options.output ?? process.stdout,
      errorOutput: options.errorOutput ?? (options.output ? undefined : process.stderr),
      env,
      interactive: options.interactive,
      color: options.color,
      history: past.reverse(),
      completer: (line: string) => completeCommand(line, this.#options.toolNames?.() ?? []),
    });
    this.#terminal = terminal;
    if (terminal.input.isTTY !== true) this.#serial = new SerialMessages(() => !this.busy, (text) => void this.#submit(text));
    const model = typeof options.model === "function" ? await options.model() : (options.model ?? "(default)");
    terminal.printAbove(formatWelcome({ workspace: this.#framework.workspace, model }, terminal.width, terminal.style, terminal.interactive));
    terminal.setPrompt(this.#label());
    const rl = terminal.readline;
    rl.on("line", (line) => void this.#onLine(line));
    rl.on("SIGINT", () => void this.#onInterrupt());
    rl.on("close", () => {
      this.#approvals.close();
      void this.#endOfInput();
    });
    terminal.input.on("keypress", (_text: string, key?: { ctrl?: boolean; name?: string }) => {
      if (key?.name === "paste-start") this.#input.pasteStart();
      else if (key?.name === "paste-end") this.#input.pasteEnd();
      if (!(key?.ctrl && key.name === "c")) this.#quitArmed = false;
      if (key?.ctrl && key.name === "x") this.#toggleMode();
    });
    // The manager aborts `signal` when it starts shutting down and calls stop() once its
    // turns are done: from then on no new line is taken.
    const stopTaking = () => void (this.#leaving = true);
    if (signal.aborted) stopTaking();
    else signal.addEventListener("abort", stopTaking, { once: true });
    terminal.showPrompt();
    // The renderer, log-update and the tool names load once the prompt is up: it must not wait for them.
    setImmediate(() => {
      this.#rendering.preload(terminal);
      this.#options.toolNames?.();
    });
  }

  #logSink(env: NodeJS.ProcessEnv): LogSink {
    return (level, namespace, message, error) => {
      if (!env.BUB_DEBUG || !this.#terminal) return;
      const detail = error === undefined ? "" : `: ${error instanceof Error ? error.message : String(error)}`;
      this.#terminal.printAbove(this.#terminal.style("gray", `${level.toUpperCase()} ${namespace} ${message}${detail}`));
    };
  }

  #toggleMode(): void {
    this.#mode = this.#mode === "agent" ? "shell" : "agent";
    this.#terminal?.setPrompt(this.#label());
  }

  async #onLine(raw: string): Promise<void> {
    const terminal = this.#terminal;
    if (!terminal || this.#leaving) return;
    // While a tool call waits for approval, the next line is the answer.
    if (this.#approvals.answer(raw)) return;
    const text = this.#input.push(raw);
    // After a `\` the message goes on at a continuation prompt; inside a paste there is none.
    if (text === null) return void (this.#input.pasting || terminal.setPrompt(CONTINUATION_PROMPT, !this.busy));
    terminal.setPrompt(this.#label(), false);
    this.#quitArmed = false;
    if (this.#serial) this.#serial.add(text);
    else await this.#submit(text);
  }

  /** The input ended: what is collected or queued still runs, in order, then the chat leaves. */
  async #endOfInput(): Promise<void> {
    const rest = this.#input.flush();
    if (rest !== null) this.#serial ? this.#serial.add(rest) : void this.#submit(rest);
    await this.#serial?.sendAll(() => this.whenIdle(), () => this.#leaving || this.#stopping);
    return this.#leave(true);
  }

  async #submit(text: string): Promise<void> {
    const terminal = this.#terminal;
    if (!terminal || this.#leaving) return;
    const line = text.trim();
    if (line === "") {
      if (!this.busy) terminal.showPrompt();
      return;
    }
    if (this.#history) {
      const file = this.#history;
      this.#historyWrites = this.#historyWrites.then(() => appendHistory(file, line)).catch(() => {});
    }
    if (LEAVE_COMMANDS.has(line)) return this.#leave(false);
    if (line === ",thinking") {
      this.#expandThinking = !this.#expandThinking;
      terminal.printAbove(terminal.style("gray", `Thinking output is now ${this.#expandThinking ? "expanded" : "collapsed"}.`));
      if (!this.busy) terminal.showPrompt();
      return;
    }
    const content = this.#mode === "shell" && !line.startsWith(",") ? `,${line}` : line;
    const steering = this.busy;
    if (steering) terminal.printAbove(terminal.style("dim", `${this.#label()}(steering) ${line}`));
    const message = new ChannelMessage({
      sessionId: this.#sessionId,
      channel: this.name,
      chatId: this.#chatId,
      context: { thread_id: this.#sessionId, ...this.#turnModel.context() },
      content,
      kind: content.startsWith(",") ? "command" : "normal",
      lifespan: {
        enter: () => this.#turns.submitted(message),
        exit: () => this.#turns.ended(message),
      },
    });
    if (!steering) this.#turns.submitted(message);
    try {
      if (!this.#handler) throw new Error("the cli channel has no message handler: run it through a channel manager");
      await this.#handler(message);
    } catch (error) {
      this.#turns.ended(message);
      terminal.printError(error instanceof Error ? error.message : String(error));
    }
  }

  /** Shows whether a turn is in flight: the spinner starts when one begins. */
  #showBusy(busy: boolean): void {
    const terminal = this.#terminal;
    if (!terminal || terminal.closed) return;
    const wasBusy = terminal.busy;
    terminal.setBusy(busy);
    if (busy && !wasBusy) terminal.setSpinner(SPINNER_LABEL);
    // The next piped message starts once this change has settled.
    if (!busy && this.#serial) queueMicrotask(() => this.#serial?.drain());
  }

  async #onInterrupt(): Promise<void> {
    const terminal = this.#terminal;
    if (!terminal) return;
    if (this.#quitArmed) return this.#leave(false);
    const typed = terminal.readline.line !== "" || this.#input.collecting;
    this.#input.reset();
    terminal.setPrompt(this.#label(), false);
    // A second Ctrl-C leaves: after one that cancelled a turn, or one on an empty prompt.
    this.#quitArmed = this.busy || !typed;
    if (!this.busy) {
      terminal.clearInput();
      // Nothing was running: say how to leave, not that something was interrupted.
      if (!typed) terminal.printAbove(terminal.style("gray", QUIT_HINT));
      return;
    }
    this.#turns.interrupt((hadStreams) => {
      if (!hadStreams) terminal.printAbove(terminal.style("yellow", "Interrupted."));
    });
    await this.#framework.runtime.call("quitSession", { sessionId: this.#sessionId }).catch(() => {});
  }

  async #leave(endOfInput: boolean): Promise<void> {
    if (this.#leaving || this.#stopping) return;
    this.#leaving = true;
    if (endOfInput) {
      // Piped input ends before its turns do: let them finish first.
      await this.whenIdle();
    } else if (this.busy) {
      this.#turns.interrupt();
      await this.#framework.runtime.call("quitSession", { sessionId: this.#sessionId }).catch(() => {});
    }
    // The channel manager stops this channel once its turns are done; alone, stop now.
    if (this.#options.onExit) this.#options.onExit();
    else await this.stop();
  }

  /** Says goodbye, clears the live region, closes the prompt and restores logging. */
  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    this.#turns.abortStreams();
    const terminal = this.#terminal;
    if (terminal && !terminal.closed) {
      terminal.printAbove(terminal.style("gray", "Bye."));
      terminal.close();
    }
    this.#restoreLogs?.();
    this.#restoreLogs = null;
    await this.#historyWrites;
    this.#resolveExited();
  }

  async send(message: Envelope): Promise<void> {
    if (message.kind !== "error") return;
    const terminal = this.#terminal;
    const content = message.content;
    if (!terminal || content.trim() === "") return;
    this.#turns.failed();
    terminal.printError(content);
  }

  /** Asks the person at the terminal whether a tool call may run (see ./approval.ts). */
  askApproval(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    return this.#approvals.ask(request, signal);
  }

  admitMessage({ turn }: { sessionId: string; message: Envelope; turn: TurnSnapshot }): AdmitDecision | null {
    return turn.isRunning ? { action: "steer", reason: STEER_REASON } : null;
  }

  /** Prints the turn's stream; while it does, the turn's tool calls are shown by its printer (`context.toolReporter`). */
  async *streamEvents(message: Envelope, stream: AsyncStreamEvents, context?: TurnContext): AsyncIterable<StreamEvent> {
    const terminal = this.#terminal;
    if (!terminal || terminal.closed) {
      yield* stream;
      return;
    }
    const active = this.#turns.openStream(message);
    const markdown = await this.#rendering.ready(terminal);
    const printer = new TurnPrinter(terminal, {
      kind: message.kind,
      expandThinking: this.#expandThinking,
      markdown,
      throttleMs: this.#options.throttleMs ?? 50,
      toolName: (name) => displayToolName(name, this.#options.toolNames?.() ?? []),
    });
    if (context) context.toolReporter = printer;
    try {
      yield* this.#turnModel.watch(message.content, printTurn(printer, stream, active.controller.signal));
    } finally {
      if (context?.toolReporter === printer) context.toolReporter = null;
      this.#turns.closeStream(active);
    }
  }
}

/**
 * The `cli` channel for a framework. The builtin plugin provides it from
 * `provideChannels({ messageHandler })`; `bub chat` passes its own streams and `onExit`.
 *
 * ```ts
 * const cli = createCliChannel(framework, { messageHandler, onExit: () => controller.abort() });
 * await cli.start(controller.signal);
 * ```
 */
export function createCliChannel(framework: CliFramework, options: CliChannelOptions = {}): CliChannel {
  return new CliChannel(framework, options);
}
