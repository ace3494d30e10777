import { createLogger } from "../kernel/log.ts";
import type { HookRuntime } from "../kernel/runtime.ts";
import type { TurnState } from "../kernel/types.ts";
import type { TurnContext } from "../kernel/turn-context.ts";
import { proceed, type LlmCallDecision, type LlmCallRequest, type LlmCallResult, type ToolCall, type ToolCallDecision, type ToolCallResult } from "../kernel/interception.ts";
import type { LlmCallHooks } from "../llm/model-step.ts";

const log = createLogger("bub:hooks");

/**
 * The agent loop's interception hooks. Unlike ordinary hooks, every implementation is
 * isolated: one that throws is logged and counts as "no answer", and the rest still run.
 * One per run: the hooks get its turn's context.
 */
export class AgentHooks implements LlmCallHooks {
  readonly #runtime: HookRuntime;
  readonly #turn: TurnContext;

  constructor(runtime: HookRuntime, turn: TurnContext) {
    this.#runtime = runtime;
    this.#turn = turn;
  }

  async #isolated(hook: string, plugin: string, run: () => unknown): Promise<unknown> {
    try {
      return await run();
    } catch (error) {
      log.warn(`hook.agent_hook_failed hook=${hook} adapter=${plugin}`, error);
      return undefined;
    }
  }

  /** Chains `beforeLlmCall`: a request answer replaces the request; `finish` stops the chain. */
  async beforeLlmCall(request: LlmCallRequest, state: TurnState, signal: AbortSignal): Promise<{ request: LlmCallRequest; decision: LlmCallDecision | null }> {
    let current = request;
    for (const impl of this.#runtime.implementations("beforeLlmCall")) {
      const value = await this.#isolated("beforeLlmCall", impl.plugin, () => impl.call({ request: current, state, context: this.#turn, signal }));
      if (value === null || value === undefined) continue;
      if (isLlmCallDecision(value)) return { request: current, decision: value };
      if (isLlmCallRequest(value)) current = value;
      else log.warn(`hook.agent_hook_bad_return hook=beforeLlmCall adapter=${impl.plugin}`);
    }
    return { request: current, decision: null };
  }

  /** Tells every `afterLlmCall` observer. */
  async afterLlmCall(request: LlmCallRequest, result: LlmCallResult, state: TurnState, signal: AbortSignal): Promise<void> {
    for (const impl of this.#runtime.implementations("afterLlmCall")) {
      await this.#isolated("afterLlmCall", impl.plugin, () => impl.call({ request, result, state, context: this.#turn, signal }));
    }
  }

  /**
   * Chains `beforeToolCall`: `proceed(args)` replaces the arguments seen by later plugins and
   * the tool; `replace`/`deny` stop the chain. Returns the final call and decision.
   */
  async beforeToolCall(call: ToolCall, state: TurnState, signal: AbortSignal): Promise<{ call: ToolCall; decision: ToolCallDecision }> {
    let current = call;
    for (const impl of this.#runtime.implementations("beforeToolCall")) {
      const value = await this.#isolated("beforeToolCall", impl.plugin, () => impl.call({ call: current, state, context: this.#turn, signal }));
      if (value === null || value === undefined) continue;
      if (!isToolCallDecision(value)) {
        log.warn(`hook.agent_hook_bad_return hook=beforeToolCall adapter=${impl.plugin}`);
        continue;
      }
      if (value.action !== "proceed") return { call: current, decision: value };
      if (value.arguments) current = { ...current, arguments: { ...value.arguments } };
    }
    return { call: current, decision: proceed() };
  }

  /** Hands every `afterToolCall` observer the same mutable result. */
  async afterToolCall(call: ToolCall, result: ToolCallResult, state: TurnState, signal: AbortSignal): Promise<void> {
    for (const impl of this.#runtime.implementations("afterToolCall")) {
      await this.#isolated("afterToolCall", impl.plugin, () => impl.call({ call, result, state, context: this.#turn, signal }));
    }
  }
}

/** True for a value made by {@link finish}. */
function isLlmCallDecision(value: unknown): value is LlmCallDecision {
  return typeof value === "object" && value !== null && "action" in value && value.action === "finish" && "text" in value && typeof value.text === "string";
}

/** True for a value made by {@link proceed}, {@link replace} or {@link deny}. */
function isToolCallDecision(value: unknown): value is ToolCallDecision {
  if (typeof value !== "object" || value === null || !("action" in value)) return false;
  return value.action === "proceed" || value.action === "replace" || value.action === "deny";
}

/** True for something shaped like an {@link LlmCallRequest}. */
function isLlmCallRequest(value: unknown): value is LlmCallRequest {
  return typeof value === "object" && value !== null && "model" in value && typeof value.model === "string" && "messages" in value && Array.isArray(value.messages);
}
