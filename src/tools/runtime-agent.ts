/**
 * What tools may ask of the agent that runs them. The builtin agent puts itself in the
 * turn state as `_runtime_agent`; tools read it with {@link runtimeAgentOf}. Defined here,
 * on the tools side, so tools never import the agent.
 */
import type { Prompt } from "../kernel/envelope.ts";
import type { AsyncStreamEvents } from "../kernel/stream.ts";
import type { TurnState } from "../kernel/types.ts";
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
  /** Cancels the run. */
  readonly signal?: AbortSignal;
}

/** The agent as tools see it. */
export interface RuntimeAgent {
  /** The tools this agent offers (builtin tools plus those registered by plugins). */
  readonly tools: ToolRegistry;
  /** Runs the agent loop for one prompt on a session (the `subagent` tool uses this). */
  runStream(sessionId: string, prompt: Prompt, state: TurnState, options?: RunStreamOptions): Promise<AsyncStreamEvents>;
  /** Stops the session's running and queued turns through the bound channel router. */
  quitSession(sessionId: string): Promise<void>;
  /** A configured value by dotted path (`telegram.token`), or undefined. */
  configValue(path: string): unknown;
  /** The directory of the session's workspace. */
  workspaceOf(state: TurnState): string;
  /** The model a turn with `state` uses, and the configured fallback models. */
  modelChoice?(state: TurnState): Promise<{ model: string; fallbacks: readonly string[] }>;
  /** Checks a `provider:model` id before a session switches to it (provider, key, listed model). */
  checkModel?(modelId: string, signal?: AbortSignal): Promise<ModelCheck>;
}

/** The agent recorded in a turn state, or null. */
export function runtimeAgentOf(state: TurnState): RuntimeAgent | null {
  const agent = state._runtime_agent;
  return typeof agent === "object" && agent !== null && typeof (agent as RuntimeAgent).runStream === "function" ? (agent as RuntimeAgent) : null;
}
