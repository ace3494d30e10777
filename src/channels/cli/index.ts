/** The `cli` channel: an interactive REPL with live Markdown rendering. */
export { CliChannel, createCliChannel, type CliChannelOptions, type CliFramework } from "./channel.ts";
export { formatToolCall, formatToolFailure, formatToolSuccess, promptLabel, type CliMode } from "./format.ts";
export { historyFile, loadHistory, appendHistory, parseHistory } from "./history.ts";
export { Terminal, type TerminalInput, type TerminalOutput, type TerminalOptions } from "./terminal.ts";
