import type { HookRuntime } from "../kernel/runtime.ts";
import type { TurnState } from "../kernel/types.ts";
import type { TurnContext } from "../kernel/turn-context.ts";
import { proceed, type LlmCallDecision, type LlmCallRequest, type LlmCallResult, type ToolCall, type ToolCallDecision, type ToolCallResult } from "../kernel/interception.ts";
import type { LlmCallHooks } from "../llm/model-step.ts";

/**
 * The agent loop's interception hooks for one run, with its turn's context: how they chain
 * and that each implementation is isolated is the hook table's (`kernel/hook-table.ts`).
 */
export class AgentHooks implements LlmCallHooks {
  readonly #runtime: HookRuntime;
  readonly #turn: TurnContext;

  constructor(runtime: HookRuntime, turn: TurnContext) {
    this.#runtime = runtime;
    this.#turn = turn;
  }

  /** A request answer replaces the request; `finish` stops the chain. */
  async beforeLlmCall(request: LlmCallRequest, state: TurnState, signal: AbortSignal): Promise<{ request: LlmCallRequest; decision: LlmCallDecision | null }> {
    const { args, answer } = await this.#runtime.call("beforeLlmCall", { request, state, context: this.#turn, signal });
    return { request: args.request, decision: answer && "action" in answer ? answer : null };
  }

  async afterLlmCall(request: LlmCallRequest, result: LlmCallResult, state: TurnState, signal: AbortSignal): Promise<void> {
    await this.#runtime.call("afterLlmCall", { request, result, state, context: this.#turn, signal });
  }

  /** `proceed(args)` replaces the arguments later plugins and the tool see; `replace`/`deny` stop the chain. */
  async beforeToolCall(call: ToolCall, state: TurnState, signal: AbortSignal): Promise<{ call: ToolCall; decision: ToolCallDecision }> {
    const { args, answer } = await this.#runtime.call("beforeToolCall", { call, state, context: this.#turn, signal });
    return { call: args.call, decision: answer ?? proceed() };
  }

  /** Every observer gets the same mutable result. */
  async afterToolCall(call: ToolCall, result: ToolCallResult, state: TurnState, signal: AbortSignal): Promise<void> {
    await this.#runtime.call("afterToolCall", { call, result, state, context: this.#turn, signal });
  }
}
