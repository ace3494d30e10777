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
export {
  currentToolCallReporter,
  renderLogValue,
  runWithToolCallReporter,
  toolCallStartLine,
  withToolCallReporter,
  type ToolCallReporter,
} from "./reporting.ts";
export { runtimeAgentOf, type RunStreamOptions, type RuntimeAgent } from "./runtime-agent.ts";
