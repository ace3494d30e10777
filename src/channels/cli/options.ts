/** The CLI channel's options and what it needs from the framework. */
import type { LogSink } from "../../kernel/log.ts";
import type { HookRuntime } from "../../kernel/runtime.ts";
import type { MessageHandler } from "../../kernel/types.ts";
import type { TerminalInput, TerminalOutput } from "./terminal.ts";

/** What the CLI channel needs from the framework. */
export interface CliFramework {
  readonly workspace: string;
  readonly home: string;
  /** Its hooks: `quitSession` stops the chat's session when the person interrupts or leaves. */
  readonly runtime: Pick<HookRuntime, "call">;
  setLogSink(sink: LogSink | null): () => void;
}

/** Options of {@link createCliChannel}. */
export interface CliChannelOptions {
  /** Receives each submitted line as a message (the channel manager's `onReceive`). */
  messageHandler?: MessageHandler;
  /** Defaults: process.stdin / process.stdout, and process.stderr for errors unless `output` is given. */
  input?: TerminalInput;
  output?: TerminalOutput;
  errorOutput?: NodeJS.WritableStream;
  env?: NodeJS.ProcessEnv;
  /** Force the live, coloured mode on or off (default: output is a TTY and TERM is not dumb). */
  interactive?: boolean;
  color?: boolean;
  /** The model shown in the welcome block. */
  model?: string | (() => string | Promise<string>);
  /** Tool names offered by tab completion after `,`. */
  toolNames?: () => Iterable<string>;
  /** A model for this chat's turns only (`bub chat --model`), until a `,model <id>` succeeds. */
  turnModel?: string | null;
  /** Defaults `cli_session` and `cli_chat`. */
  sessionId?: string;
  chatId?: string;
  /** The history file; null keeps no history. Default `<home>/history/<md5(workspace)>.history`. */
  historyFile?: string | null;
  /** Called once when the person leaves (`,quit`, `,exit`, Ctrl-D, end of input). */
  onExit?: () => void;
  /** Minimum time between two live Markdown re-renders. Default 50 ms. */
  throttleMs?: number;
  /** Keep log records off the terminal while the REPL runs (default true; BUB_DEBUG shows them above the prompt). */
  silenceLogs?: boolean;
}
