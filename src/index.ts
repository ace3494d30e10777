/**
 * bub-ts public API: the framework and `createBub`, the plugin API (hooks, tools,
 * settings), envelope helpers, errors, and the store and channel interfaces plugins
 * implement. Test doubles live in `bub-ts/testing`. Everything else is internal.
 */
export { BubFramework } from "./kernel/framework.ts";
export type { BubFrameworkOptions, PluginExport, PluginOrigin, PluginStatus, ProcessInboundOptions } from "./kernel/framework.ts";
export { createBub } from "./builtin/create.ts";
export type { CreateBubOptions, UntrustedWorkspace } from "./builtin/create.ts";
export type { RunningScope } from "./kernel/scope.ts";
/** The plugin API's version (a plugin declares the range it supports as `"bub": { "api": "^2.0.0" }`). */
export { IncompatiblePluginError, PLUGIN_API_VERSION } from "./kernel/plugin-api.ts";
export type { PluginApiField } from "./kernel/plugin-api.ts";

export { definePlugin } from "./kernel/hooks.ts";
export { HOOK_NAMES, HOOK_TABLE, SYNC_HOOKS } from "./kernel/hook-table.ts";
export type { Combine, HookResult, HookSpec } from "./kernel/hook-table.ts";
export type { BubHooks, BubPlugin, ChainedHook, ErrorStage, HookArgs, HookName, HookReturn, HookValue, MaybePromise, NextHook, NoResult, OutboundInit, PluginFactory, Provided } from "./kernel/hooks.ts";
export { PluginHookError } from "./kernel/hook-error.ts";
export { finish, proceed, replace, deny } from "./kernel/interception.ts";
export type { LlmCallDecision, LlmCallRequest, LlmCallResult, ToolCall, ToolCallDecision, ToolCallResult } from "./kernel/interception.ts";
export { AsyncStreamEvents, collectText, createStreamState } from "./kernel/stream.ts";
export type { StreamEvent, StreamEventKind, StreamState, Usage } from "./kernel/stream.ts";
export { defineTool, registerTool, toolsOf, toolInputSchema } from "./tools/index.ts";
export type { Tool, ToolContext, ToolDefinition, ToolParameters, ToolRunOptions } from "./tools/index.ts";
/** Where a session's shell and file tools run (the `provideSandbox` hook), and the host's sandbox to wrap. */
export type { Sandbox, SandboxCommand, SandboxFileInfo, SandboxFileKind, SandboxOutputStream, SandboxProcess } from "./kernel/sandbox.ts";
export { createHostSandbox } from "./tools/sandbox-host.ts";
export type { HostSandboxOptions } from "./tools/sandbox-host.ts";
export { defineSettings } from "./kernel/settings-contract.ts";
/** The zod 4 the plugin API takes schemas of (tool parameters, settings), so a plugin needs no zod of its own. */
export { z } from "zod";
export type { ConfigFile, SettingsOf, SettingsSchema, SettingsSection, SettingsStore } from "./kernel/settings-contract.ts";

export { envelopeToJson, isEmptyPrompt, isEnvelope, replyChannelOf, toEnvelope, unpackBatch } from "./kernel/envelope.ts";
export type { Envelope, EnvelopeInput, EnvelopeKind, MediaItem, Prompt, PromptPart, TurnLifespan } from "./kernel/envelope.ts";
export { childTurnContext, createTurnContext, createTurnState, type ToolCallReporter, type TurnContext } from "./kernel/turn-context.ts";
export { ChannelMessage } from "./channels/message.ts";
export type { ChannelMessageInit } from "./channels/message.ts";

export { BubError, ErrorKind, describeError, toErrorKind } from "./kernel/errors.ts";
export type { BubErrorData } from "./kernel/errors.ts";
export { ConfigError } from "./config/settings.ts";

export { isAdmitDecision } from "./kernel/types.ts";
export type { ApprovalAnswer, ApprovalAsker, ApprovalRequest } from "./kernel/approval.ts";
export type { AdmitDecision, Channel, ChannelKind, ChannelRouter, MessageHandler, ModelChoice, ModelOptions, SteeringInbox, SteeringTarget, TurnResult, TurnSnapshot, TurnState } from "./kernel/types.ts";
export { LAST_ANCHOR, isTapeContext } from "./kernel/tape-contract.ts";
export type { ChatMessage, ContextSelector, NewTapeEntry, TapeContext, TapeEnd, TapeEntry, TapeHandle, TapeQuery, TapeSidecar, TapeStore } from "./kernel/tape-contract.ts";
/** What a plugin writes to and reads from a tape: entry constructors, the query builder, the default context. */
export { entries } from "./tape/entry.ts";
export type { EntryMeta } from "./tape/entry.ts";
export { tapeQuery } from "./tape/query.ts";
export type { DateBound, TapeQueryBuilder } from "./tape/query.ts";
export { createDefaultTapeContext, selectMessages } from "./tape/context.ts";
export { currentCorrelation } from "./kernel/correlation.ts";
export type { Correlation } from "./kernel/correlation.ts";
