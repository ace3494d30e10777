/** What one model call is: the request the runtime makes, and the events it streams back. */
import type { Usage } from "../kernel/stream.ts";
import type { ChatMessage } from "../kernel/tape-contract.ts";

/** A completed tool call, in the OpenAI chat shape; `arguments` is the model's raw JSON text. */
export type ChatToolCall = {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
};

/** A tool as the model sees it. */
export interface ModelToolSpec {
  /** Model-facing name (`fs_read`). */
  readonly name: string;
  readonly description: string;
  /** JSON schema of the arguments object. */
  readonly parameters: Readonly<Record<string, unknown>>;
}

/** What to ask the model. */
export interface ModelCallRequest {
  /** `provider:model`. */
  readonly model: string;
  /** OpenAI-style messages, system prompt included. */
  readonly messages: readonly ChatMessage[];
  readonly tools?: readonly ModelToolSpec[];
  /** `max_tokens`; null/undefined: the settings' value. */
  readonly maxTokens?: number | null;
  /** The session's reasoning effort; overrides `completion_args.reasoning_effort`. */
  readonly reasoningEffort?: string | null;
  readonly signal?: AbortSignal;
}

/** One event of a model call, in arrival order; `finish` is always last. */
export type ModelCallEvent =
  | { readonly type: "reasoning"; readonly delta: string }
  | { readonly type: "text"; readonly delta: string }
  | { readonly type: "tool_call"; readonly call: ChatToolCall }
  | {
      readonly type: "finish";
      /** Unified finish reason: `stop`, `length`, `tool-calls`, `content-filter`, `error`, `other`. */
      readonly finishReason: string;
      /** The provider's own finish reason, e.g. `tool_calls`. */
      readonly rawFinishReason: string | null;
      readonly usage: Usage | null;
      /** The candidate that answered (a fallback, possibly), `provider:model`. */
      readonly model: string;
      readonly provider: string;
    };
