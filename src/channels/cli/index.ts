/** The `cli` channel: an interactive REPL with live Markdown rendering. */
export { CliChannel, createCliChannel } from "./channel.ts";
export type { CliChannelOptions, CliFramework } from "./options.ts";
export { formatToolCall, formatToolFailure, formatToolSuccess, promptLabel, type CliMode } from "./format.ts";
export { historyFile, loadHistory, appendHistory, parseHistory } from "./history.ts";
export { Terminal, type TerminalInput, type TerminalOutput, type TerminalOptions } from "./terminal.ts";
