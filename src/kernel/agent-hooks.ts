import { createLogger } from "./log.ts";
import type { HookRuntime } from "./runtime.ts";
import type { TurnState } from "./types.ts";
import {
  isLlmCallDecision,
  isLlmCallRequest,
  isToolCallDecision,
  proceed,
  type LlmCallDecision,
  type LlmCallRequest,
  type LlmCallResult,
  type ToolCall,
  type ToolCallDecision,
  type ToolCallResult,
} from "./interception.ts";

const log = createLogger("bub:hooks");

/**
 * The agent loop's interception hooks. Unlike ordinary hooks, every implementation is
 * isolated: one that throws is logged and counts as "no answer", and the rest still run.
 */
export class AgentHooks {
  readonly #runtime: HookRuntime;

  constructor(runtime: HookRuntime) {
    this.#runtime = runtime;
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
  async beforeLlmCall(request: LlmCallRequest, state: TurnState): Promise<{ request: LlmCallRequest; decision: LlmCallDecision | null }> {
    let current = request;
    for (const impl of this.#runtime.implementations("beforeLlmCall")) {
      const value = await this.#isolated("beforeLlmCall", impl.plugin, () => impl.call({ request: current, state } as never));
      if (value === null || value === undefined) continue;
      if (isLlmCallDecision(value)) return { request: current, decision: value };
      if (isLlmCallRequest(value)) current = value;
      else log.warn(`hook.agent_hook_bad_return hook=beforeLlmCall adapter=${impl.plugin}`);
    }
    return { request: current, decision: null };
  }

  /** Tells every `afterLlmCall` observer. */
  async afterLlmCall(request: LlmCallRequest, result: LlmCallResult, state: TurnState): Promise<void> {
    for (const impl of this.#runtime.implementations("afterLlmCall")) {
      await this.#isolated("afterLlmCall", impl.plugin, () => impl.call({ request, result, state } as never));
    }
  }

  /**
   * Chains `beforeToolCall`: `proceed(args)` replaces the arguments seen by later plugins and
   * the tool; `replace`/`deny` stop the chain. Returns the final call and decision.
   */
  async beforeToolCall(call: ToolCall, state: TurnState): Promise<{ call: ToolCall; decision: ToolCallDecision }> {
    let current = call;
    for (const impl of this.#runtime.implementations("beforeToolCall")) {
      const value = await this.#isolated("beforeToolCall", impl.plugin, () => impl.call({ call: current, state } as never));
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
  async afterToolCall(call: ToolCall, result: ToolCallResult, state: TurnState): Promise<void> {
    for (const impl of this.#runtime.implementations("afterToolCall")) {
      await this.#isolated("afterToolCall", impl.plugin, () => impl.call({ call, result, state } as never));
    }
  }
}
