/**
 * bub-ts public API: the framework, hook contracts and the vocabulary plugins speak.
 * Everything else is internal.
 */
export { BubFramework } from "./builtin/framework.ts";
export type { BubFrameworkOptions, PluginStatus, RunningScope } from "./kernel/framework.ts";
export { definePlugin, HOOK_NAMES, SYNC_HOOKS } from "./kernel/hooks.ts";
export type {
  BubHooks,
  BubPlugin,
  ErrorStage,
  HookArgs,
  HookName,
  HookReturn,
  HookValue,
  MaybePromise,
  NoResult,
  PluginFactory,
  Provided,
} from "./kernel/hooks.ts";
export { HookRuntime, addHookNames } from "./kernel/runtime.ts";
export type { HookImpl } from "./kernel/runtime.ts";
export { AgentHooks } from "./kernel/agent-hooks.ts";
export { contentOf, fieldOf, normalizeEnvelope, unpackBatch, isEmptyPrompt } from "./kernel/envelope.ts";
export type { Envelope, Prompt, PromptPart } from "./kernel/envelope.ts";
export { AsyncStreamEvents, collectText, createStreamState } from "./kernel/stream.ts";
export type { StreamEvent, StreamEventKind, StreamState, Usage } from "./kernel/stream.ts";
export { BubError, ErrorKind, describeError, toErrorKind } from "./kernel/errors.ts";
export type { BubErrorData } from "./kernel/errors.ts";
export { isAdmitDecision } from "./kernel/types.ts";
export type {
  AdmitDecision,
  Channel,
  ChannelKind,
  ChannelRouter,
  MessageHandler,
  ModelChoice,
  ModelOptions,
  SteeringInbox,
  TurnResult,
  TurnSnapshot,
  TurnState,
} from "./kernel/types.ts";
export { finish, proceed, replace, deny } from "./kernel/interception.ts";
export type { LlmCallDecision, LlmCallRequest, LlmCallResult, ToolCall, ToolCallDecision, ToolCallResult } from "./kernel/interception.ts";
export { LAST_ANCHOR, isTapeContext } from "./kernel/tape-contract.ts";
export type { ChatMessage, ContextSelector, NewTapeEntry, TapeContext, TapeEntry, TapeHandle, TapeQuery, TapeSidecar, TapeStore } from "./kernel/tape-contract.ts";
export { ConfigError, Settings, defineSettings, envVariable, mergeConfig } from "./config/settings.ts";
export type { SettingsOf, SettingsSchema, SettingsSection } from "./config/settings.ts";
export { createLogger, setLogSink } from "./kernel/log.ts";
export type { Logger, LogLevel, LogSink } from "./kernel/log.ts";
export { ChannelMessage } from "./channels/message.ts";
export type { ChannelMessageInit, MediaItem } from "./channels/message.ts";
export { defineTool, registerTool, toolInputSchema } from "./tools/index.ts";
export type { Tool, ToolContext, ToolDefinition, ToolParameters, ToolRunOptions } from "./tools/index.ts";
