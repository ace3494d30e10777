import type { BubError } from "./errors.ts";
import type { ChatMessage } from "./tape-contract.ts";
import type { Usage } from "./stream.ts";

/** A model call about to be made; `beforeLlmCall` may return a changed copy. */
export interface LlmCallRequest {
  readonly runId: string;
  /** The call's `model_call_id` (also on what the step writes to the tape); see `src/kernel/correlation.ts`. */
  readonly modelCallId?: string;
  /** Full `provider:model` id. */
  readonly model: string;
  /** Every message sent, system prompt included. */
  readonly messages: readonly ChatMessage[];
  /** Model-facing tool names. */
  readonly toolNames: readonly string[];
  readonly maxTokens: number | null;
}

/** A `beforeLlmCall` answer that ends the step without calling the model. */
export interface LlmCallDecision {
  readonly action: "finish";
  readonly text: string;
}

/** What one real model call produced, for `afterLlmCall` observers. */
export interface LlmCallResult {
  readonly runId: string;
  readonly text: string | null;
  readonly toolCalls: readonly Record<string, unknown>[];
  readonly usage: Usage | null;
  readonly error: unknown;
  readonly durationMs: number;
  /** The provider's finish reason (`stop`, `tool_calls`, …), when the call ended normally. */
  readonly finishReason?: string | null;
  /** The `provider:model` that answered (a fallback, possibly). */
  readonly responseModel?: string;
}

/** A tool call about to run. */
export interface ToolCall {
  readonly runId: string;
  /** Model-facing name, e.g. `fs_read`. */
  readonly tool: string;
  readonly arguments: Record<string, unknown>;
  /** The model's id for this call (`call_…`), when the call came from a model step. */
  readonly callId?: string;
}

/** A `beforeToolCall` answer. */
export type ToolCallDecision =
  | { readonly action: "proceed"; readonly arguments: Record<string, unknown> | null }
  | { readonly action: "replace"; readonly result: unknown }
  | { readonly action: "deny"; readonly message: string };

/** What a tool call produced. Mutable: `afterToolCall` may assign `result`. */
export interface ToolCallResult {
  readonly runId: string;
  readonly tool: string;
  readonly arguments: Record<string, unknown>;
  result: unknown;
  error: BubError | null;
  durationMs: number;
}

const DECISION = Symbol.for("bub.decision");

/** A decision made by one of the helpers below: frozen, and marked as such. */
type Marked<T> = T & { readonly [DECISION]: true };

/** Ends the model step with `text` instead of calling the model. */
export function finish(text: string): LlmCallDecision {
  const decision: Marked<LlmCallDecision> = { action: "finish", text, [DECISION]: true };
  return Object.freeze(decision);
}

/** Lets the tool call go ahead, optionally with new arguments. */
export function proceed(args: Record<string, unknown> | null = null): ToolCallDecision {
  const decision: Marked<ToolCallDecision> = { action: "proceed", arguments: args ? { ...args } : null, [DECISION]: true };
  return Object.freeze(decision);
}

/** Skips the tool and hands the model `result` instead. */
export function replace(result: unknown): ToolCallDecision {
  const decision: Marked<ToolCallDecision> = { action: "replace", result, [DECISION]: true };
  return Object.freeze(decision);
}

/** Refuses the tool call; the model sees a tool error with `message`. */
export function deny(message: string): ToolCallDecision {
  const decision: Marked<ToolCallDecision> = { action: "deny", message, [DECISION]: true };
  return Object.freeze(decision);
}
