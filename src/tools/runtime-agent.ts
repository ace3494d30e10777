/**
 * What tools may ask of the agent that runs them: the agent hands itself to context tools
 * as `ToolContext.agent`. Defined here, on the tools side, so tools never import the agent.
 */
import type { Prompt } from "../kernel/envelope.ts";
import type { AsyncStreamEvents } from "../kernel/stream.ts";
import type { ModelOptions, TurnState } from "../kernel/types.ts";
import type { TurnContext } from "../kernel/turn-context.ts";
import type { ToolRegistry } from "./registry.ts";

/** What checking a model id found (the agent checks it with the model catalog, src/llm/model-catalog.ts). */
export type ModelCheck =
  /** Usable: listed by its provider, or configured (`note` says when the list could not be read). */
  | { readonly status: "ok"; readonly id: string; readonly note?: string }
  /** Not usable: a malformed id, an unknown provider, a missing or refused key. */
  | { readonly status: "invalid"; readonly message: string }
  /** The provider lists its models and this one is not among them. */
  | { readonly status: "unknown_model"; readonly id: string; readonly provider: string; readonly model: string; readonly available: readonly string[] };

/** Options of one {@link RuntimeAgent.runStream} call. */
export interface RunStreamOptions {
  /** `provider:model`; default the session's or the configured model. */
  readonly model?: string | null;
  /** Skill names the run may list and load (null: all). */
  readonly allowedSkills?: readonly string[] | null;
  /** Runtime tool names the run may use (null: all). */
  readonly allowedTools?: readonly string[] | null;
  /** Cancels the run (default: the context's signal). */
  readonly signal?: AbortSignal;
  /**
   * The turn this run belongs to: used as it is for a run on the same session, as the
   * parent of a new context for a run on another one (a subagent). Absent: a new turn.
   */
  readonly context?: TurnContext;
}

/** The agent as tools see it. */
export interface RuntimeAgent {
  /** The tools this agent offers (builtin tools plus those registered by plugins). */
  readonly tools: ToolRegistry;
  /** Runs the agent loop for one prompt on a session (the `subagent` tool uses this). */
  runStream(sessionId: string, prompt: Prompt, state: TurnState, options?: RunStreamOptions): Promise<AsyncStreamEvents>;
  /** Stops the session's running and queued turns but `context`'s, the turn asking (the `quitSession` hook, answered by the running channel manager). */
  quitSession(sessionId: string, context?: TurnContext): Promise<void>;
  /** A configured value by dotted path (`telegram.token`), or undefined. */
  configValue(path: string): unknown;
  /** The model a turn with `state` uses, and the configured fallback models. */
  modelChoice?(state: TurnState): Promise<{ model: string; fallbacks: readonly string[] }>;
  /** The models offered for a session (the `provideModelOptions` hook's merged answer). */
  modelOptions?(sessionId: string): Promise<ModelOptions>;
  /** Checks a `provider:model` id before a session switches to it (provider, key, listed model). */
  checkModel?(modelId: string, signal?: AbortSignal): Promise<ModelCheck>;
}
