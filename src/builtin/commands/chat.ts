/**
 * `bub chat`: the interactive REPL. A channel manager runs only the `cli` channel (plus
 * lifecycle channels) with streaming output, until the person leaves.
 */
import type { Command } from "commander";
import type { BubFramework } from "../../kernel/framework.ts";
import { INTERRUPT_EXIT_CODES, TurnInterrupted, type InterruptSignal } from "../../agent/interrupt.ts";
import { interruptedLine } from "./run.ts";
import { modelOption } from "./model-option.ts";
import type { TerminalInput, TerminalOutput } from "../../channels/cli/terminal.ts";

/** Options of `bub chat`. */
export interface ChatCommandOptions {
  chatId?: string;
  sessionId?: string;
  /** `provider:model` for this chat only, until a `,model <id>` in it succeeds. */
  model?: string;
}

/** Where the REPL reads and writes (process.stdin / process.stdout by default). */
export interface ChatStreams {
  input?: TerminalInput;
  output?: TerminalOutput;
  env?: NodeJS.ProcessEnv;
  /** Where the interrupted line goes (default process.stderr). */
  errors?: { write(text: string): unknown };
}

/** A plugin's own `cli` channel that takes the chat's ids and model, as the builtin one does. */
interface MetadataTaker {
  setMetadata(ids: ChatCommandOptions): void;
}

function takesMetadata(channel: object): channel is MetadataTaker {
  return "setMetadata" in channel && typeof channel.setMetadata === "function";
}

/**
 * Runs the chat REPL until the person leaves (`,quit`, Ctrl-D, end of input) or the
 * process is told to stop. Returns the exit code.
 *
 * SIGINT or SIGTERM stops the chat. When a turn is running it is cancelled at once through
 * its signal (the model call and the running tool stop; the agent writes the message and an
 * `interrupted` event to the tape), one `bub: interrupted (…)` line goes to stderr and the
 * code is 130 (SIGINT) or 143 (SIGTERM); without a running turn the chat just leaves (0). A
 * second signal exits at once. (In a terminal, Ctrl-C is a key that interrupts the turn and
 * keeps the chat open; these are signals sent by another process.)
 */
export async function runChat(framework: BubFramework, options: ChatCommandOptions = {}, streams: ChatStreams = {}): Promise<number> {
  const [{ ChannelManager }, { CliChannel, createCliChannel }] = await Promise.all([import("../../channels/manager.ts"), import("../../channels/cli/index.ts")]);
  const stop = new AbortController();
  const manager = new ChannelManager(framework, { enabledChannels: ["cli"], streamOutput: true, graceSeconds: 5 });
  const provided = manager.channels.get("cli");
  // A plugin's own `cli` channel is used as it is; the builtin one is rebuilt on our streams.
  if (!provided || provided instanceof CliChannel) {
    const cli = createCliChannel(framework, {
      messageHandler: manager.handleMessage,
      input: streams.input,
      output: streams.output,
      env: streams.env,
      // The manager has prepared the settings before it starts the channel.
      model: () => options.model ?? String(framework.settings.getValue("model", "openrouter:openrouter/free")),
      turnModel: options.model,
      toolNames: toolNamesSource(framework),
      chatId: options.chatId,
      sessionId: options.sessionId,
      onExit: () => stop.abort(),
    });
    manager.channels.set("cli", cli);
  } else if (takesMetadata(provided)) {
    provided.setMetadata(options);
  }
  let received: InterruptSignal | null = null;
  let interrupting: Promise<number> = Promise.resolve(0);
  const onSignal = (signal: InterruptSignal) => {
    if (received) process.exit(INTERRUPT_EXIT_CODES[signal]);
    received = signal;
    interrupting = manager.interrupt(new TurnInterrupted(signal)).finally(() => stop.abort());
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  try {
    await manager.run(stop.signal);
    const cancelled = await interrupting;
    if (received && cancelled > 0) {
      (streams.errors ?? process.stderr).write(interruptedLine(received));
      return INTERRUPT_EXIT_CODES[received];
    }
  } finally {
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
  }
  return 0;
}

/** Tool names for `,` completion, from the framework's registry (imported on the first call). */
function toolNamesSource(framework: BubFramework): () => Iterable<string> {
  let registry: { names(): string[] } | null = null;
  let loading: Promise<unknown> | null = null;
  return () => {
    loading ??= import("../../tools/global.ts").then(({ toolsOf }) => (registry = toolsOf(framework))).catch(() => {});
    return registry?.names() ?? [];
  };
}

/** Adds `bub chat` to the program. */
export function registerChatCommand(app: Command, framework: BubFramework): void {
  app
    .command("chat")
    .description("talk with the agent in an interactive terminal session")
    .option("--chat-id <id>", "chat id of the messages (default cli_chat)")
    .option("--session-id <id>", "session to continue (default cli_session)")
    .option("--model <provider:model>", "model for this chat only (until ,model switches the session's)", modelOption)
    .addHelpText(
      "after",
      `
Keys and commands inside the chat:
  Enter          send the line (while the agent works, it steers the running turn)
  \ at line end  go on on the next line; a paste is one message however many lines it has
  Ctrl-C         interrupt the running turn (the chat stays open); a second Ctrl-C leaves
  Ctrl-D         leave on an empty line (also ,quit or ,exit)
  Ctrl-X         toggle shell mode: every line runs as a comma command
  Tab            complete ,<tool name>
  ,thinking      show or hide the model's reasoning
  ,model [id]    show the model and fallbacks, or switch the session's model
  ,help          list the comma commands

Examples:
  $ bub chat
  $ bub chat --session-id work
  $ bub -w ~/projects/site chat
  $ echo "summarise README.md" | bub chat     # piped: plain output, leaves at end of input`,
    )
    .action(async (options: ChatCommandOptions) => {
      const code = await runChat(framework, options);
      if (code !== 0) process.exitCode = code;
    });
}
