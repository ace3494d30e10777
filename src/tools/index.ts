/** Tool definition, registry and executor. */
export {
  defineTool,
  renameTool,
  renderToolsPrompt,
  toModelToolName,
  toModelTools,
  toolInputSchema,
  toolSchema,
  type Tool,
  type ToolContext,
  type ToolDefinition,
  type ToolParameters,
  type ToolRunOptions,
} from "./tool.ts";
export { createToolRegistry, unknownToolNamesError, type ToolRegistry } from "./registry.ts";
export {
  createToolExecutor,
  invokeTool,
  unknownTool,
  validationIssues,
  type ToolExecution,
  type ToolExecutor,
  type ToolExecutorOptions,
  type ToolInvocation,
} from "./executor.ts";
export { renderLogValue, toolCallStartLine, type ToolCallReporter } from "./reporting.ts";
export type { RunStreamOptions, RuntimeAgent } from "./runtime-agent.ts";
export { registerTool, toolsOf } from "./global.ts";
export {
  COMMAND_RUN_ID,
  commandArguments,
  isCommaCommand,
  parseCommandArguments,
  runCommaCommand,
  type CommandArguments,
  type CommaCommandResult,
} from "./commands.ts";
export { splitShellWords } from "./shell-words.ts";
export {
  builtinTools,
  COMMAND_HELP_TEXT,
  createShellManager,
  defaultShellManager,
  terminateAllShells,
  type BuiltinToolsOptions,
  type ManagedShell,
  type ShellManager,
  type ShellManagerOptions,
} from "./builtin/index.ts";
