/**
 * `bub run MESSAGE`: one turn through the whole pipeline, outbounds printed as
 * `[<channel>:<chat_id>]` followed by their content.
 */
import type { Command } from "commander";
import { ChannelMessage } from "../../channels/message.ts";
import type { Envelope } from "../../kernel/envelope.ts";
import { modelOption } from "./model-option.ts";
import { JsonTurnWriter } from "./run-json.ts";
import type { BubFramework } from "../../kernel/framework.ts";
import { errorLine } from "../error-line.ts";
import { listedPluginFailures } from "./listed-failures.ts";
import { INTERRUPT_EXIT_CODES, interruptSignalOf, withInterruptSignals, type InterruptSignal } from "../../agent/interrupt.ts";
import { redactSecrets } from "../../config/redaction.ts";
import { escapeControlChars } from "../../kernel/terminal-text.ts";

type Writer = { write(text: string): unknown };

/** `stream` with control characters escaped when it is a terminal (a pipe or file gets the text as it is). */
function forTerminal(stream: NodeJS.WriteStream): Writer {
  return stream.isTTY ? { write: (text) => stream.write(escapeControlChars(text)) } : stream;
}

/** `out` with the known secrets replaced by `[redacted:<setting>]` in everything written to it. */
function redacting(out: Writer): Writer {
  return { write: (text) => out.write(redactSecrets(text)) };
}

/** Options of `bub run`. */
export interface RunCommandOptions {
  channel: string;
  chatId: string;
  senderId: string;
  sessionId?: string;
  /** `provider:model` for this run only (the message's `context.model`; nothing is saved). */
  model?: string;
  /** Print the turn as JSON lines (see ./run-json.ts) instead of `[channel:chat]` blocks. */
  json?: boolean;
  /** Error lines carry their chain of causes (the global `--verbose`). */
  verbose?: boolean;
}

/** `[<channel>:<chat_id>]\n<content>` for an outbound. */
export function formatOutbound(message: Envelope): string {
  const channel = message.outputChannel || message.channel || "stdout";
  const where = `[${channel === "default" ? message.channel || "stdout" : channel}:${message.chatId || "local"}]`;
  return `${where}\n${message.content}\n`;
}

/** The error an `onError` outbound carries (see the builtin plugin), if any. */
function errorOf(outbound: Envelope): unknown {
  return outbound.context._error;
}

/** The line `bub run` prints on stderr when a signal interrupted the turn. */
export function interruptedLine(signal: InterruptSignal): string {
  return `bub: interrupted (${signal}) — the turn was saved to the tape\n`;
}

/**
 * Runs one message as a turn inside a `running()` scope and writes its outbounds: answers
 * to `out`, error outbounds to `err` as one `bub: …` line each. Returns the exit code: 1
 * when the turn produced an error outbound or a plugin listed in `BUB_PLUGINS` / config.yml
 * did not load (then no turn runs), else 0.
 *
 * `signal` is the turn's signal (the model call and the running tool see it). When it
 * aborts with a {@link TurnInterrupted}, the agent saves the turn to the tape, only
 * {@link interruptedLine} is written to `err`, and the code is 130 (SIGINT) or 143 (SIGTERM).
 *
 * Whatever is written, to `out` or `err`, in either form, has the known secrets redacted
 * (docs/security.md, *Secrets*): a provider's error that quotes the API key prints the marker.
 */
export async function runOnce(
  framework: BubFramework,
  message: string,
  options: RunCommandOptions,
  rawOut: Writer,
  rawErr: Writer = rawOut,
  signal?: AbortSignal,
): Promise<number> {
  const out = redacting(rawOut);
  const err = redacting(rawErr);
  const failures = listedPluginFailures(framework);
  if (failures !== "") {
    err.write(failures);
    return 1;
  }
  const inbound = new ChannelMessage({
    sessionId: options.sessionId ?? `${options.channel}:${options.chatId}`,
    channel: options.channel,
    chatId: options.chatId,
    content: message,
    context: { sender_id: options.senderId, ...(options.model ? { model: options.model } : {}) },
  });
  // JSON lines are redacted as JSON text (a secret's escaped form), and their deltas as streams.
  const json = options.json ? new JsonTurnWriter(rawOut) : null;
  // The turn is cancelled through its own signal (the command's signal aborts it).
  const task = new AbortController();
  const forward = () => task.abort(signal?.reason);
  if (signal?.aborted) forward();
  else signal?.addEventListener("abort", forward, { once: true });
  // `bub run` is a one-shot channel: a plugin, for this turn only, that every outbound reaches.
  const errors: Envelope[] = [];
  const unregister = framework.runtime.register(
    {
      name: "run",
      // Answers are printed as they are sent (not once the turn was interrupted); errors and JSON once the turn is over.
      dispatchOutbound({ message: outbound }) {
        if (outbound.kind === "error") errors.push(outbound);
        else if (!json && outbound.content !== "" && !task.signal.aborted) out.write(formatOutbound(outbound));
        return true;
      },
      // --json shows the turn's stream (text deltas, tool calls) as it comes.
      ...(json && {
        async runModelStream(args, next) {
          const stream = await next();
          return stream && args.signal === task.signal ? json.wrap(stream) : stream;
        },
      }),
    },
    "run",
  );
  const interrupted = (): number | null => {
    const which = signal?.aborted ? interruptSignalOf(signal.reason) : null;
    if (which === null) return null;
    err.write(interruptedLine(which));
    return INTERRUPT_EXIT_CODES[which];
  };
  try {
    let result: Awaited<ReturnType<BubFramework["processInbound"]>>;
    try {
      result = await framework.running(() => framework.processInbound(inbound, { signal: task.signal }));
    } catch (error) {
      const code = interrupted();
      if (code !== null) return code;
      throw error;
    }
    const code = interrupted();
    if (code !== null) return code;
    // Error outbounds sent by onError are not among the turn's own outbounds.
    const failed = errors.filter((outbound) => !result.outbounds.includes(outbound));
    if (json) return json.finish(result.sessionId, [...result.outbounds, ...failed]);
    for (const outbound of [...result.outbounds.filter((each) => each.kind === "error"), ...failed]) {
      if (outbound.content !== "") err.write(errorLine(errorOf(outbound) ?? outbound.content, { verbose: options.verbose === true, kind: "tool" }));
    }
    // Every error outbound, the turn's own too, was dispatched to this channel.
    return errors.length > 0 ? 1 : 0;
  } finally {
    signal?.removeEventListener("abort", forward);
    unregister();
  }
}

/** Adds `bub run` to the program. */
export function registerRunCommand(app: Command, framework: BubFramework): void {
  app
    .command("run")
    .description("run one message through the agent and print what it answers")
    .argument("<message>", "the message (a line starting with ',' runs a command, e.g. ',help')")
    .option("--channel <name>", "channel the message comes from", "cli")
    .option("--chat-id <id>", "chat the message comes from", "local")
    .option("--sender-id <id>", "who sent it", "human")
    .option("--session-id <id>", "session to continue (default <channel>:<chat-id>)")
    .option("--model <provider:model>", "model for this run only (the session's model is not changed)", modelOption)
    .option("--json", "print the turn as JSON lines: text deltas, tool calls and results, errors, the final answer with usage")
    .addHelpText(
      "after",
      `
Examples:
  $ bub run "what files are in this directory?"
  $ bub run ",fs.read path=README.md"
  $ bub run --session-id work "summarise what we did so far"
  $ bub run --model openai:gpt-4o-mini "one answer from another model"
  $ bub run --json "list the files" | jq -c 'select(.type == "tool_call")'
  $ BUB_API_BASE=http://127.0.0.1:8080/v1 BUB_MODEL=local:any bub run "hi"`,
    )
    .addHelpText(
      "after",
      `
SIGINT (Ctrl-C) or SIGTERM stops the turn: the model call and the running tool (its whole
process group) are stopped, the message and an "interrupted" event are written to the tape,
and bub exits with 130 (SIGINT) or 143 (SIGTERM). A second signal exits at once.`,
    )
    .action(async (message: string, options: RunCommandOptions, command: Command) => {
      options.verbose = command.optsWithGlobals().verbose === true;
      const { result: code } = await withInterruptSignals((signal) => runOnce(framework, message, options, forTerminal(process.stdout), forTerminal(process.stderr), signal));
      if (code !== 0) process.exitCode = code;
    });
}
