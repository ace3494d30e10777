import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { HookRuntime } from "../../src/kernel/runtime.ts";
import { AgentHooks } from "../../src/agent/interceptors.ts";
import type { TurnContext } from "../../src/kernel/turn-context.ts";
import { testTurnContext } from "../support/framework.ts";
import { deny, finish, proceed, replace, type LlmCallRequest, type ToolCallResult } from "../../src/kernel/interception.ts";
import type { BubPlugin } from "../../src/kernel/hooks.ts";
import { captureLogs } from "../support/temp.ts";

const request: LlmCallRequest = { runId: "run-1", model: "a:b", messages: [{ role: "user", content: "hi" }], toolNames: [], maxTokens: 10 };
const call = { runId: "run-1", tool: "fs_read", arguments: { path: "a" } };

function hooks(...plugins: BubPlugin[]): AgentHooks {
  return hooksFor(testTurnContext(), ...plugins);
}

function hooksFor(turn: TurnContext, ...plugins: BubPlugin[]): AgentHooks {
  const runtime = new HookRuntime();
  plugins.forEach((plugin, index) => runtime.register(plugin, plugin.name ?? `p${index}`));
  return new AgentHooks(runtime, turn);
}

const signal = new AbortController().signal;

describe("interception hooks", () => {
  it("chains beforeLlmCall requests and stops at finish()", async () => {
    let lowCalled = false;
    const agent = hooks(
      { name: "low", beforeLlmCall: () => void (lowCalled = true) },
      { name: "finisher", beforeLlmCall: ({ request }) => finish(`done with ${request.model}`) },
      { name: "rewriter", beforeLlmCall: ({ request }) => ({ ...request, model: "x:y" }) },
    );
    const { request: final, decision } = await agent.beforeLlmCall(request, {}, signal);
    assert.equal(final.model, "x:y");
    assert.equal(decision?.action, "finish");
    assert.equal(decision?.text, "done with x:y");
    assert.equal(lowCalled, false);
  });

  it("isolates a throwing or badly answering interceptor and goes on", async () => {
    const agent = hooks(
      { name: "good", beforeLlmCall: ({ request }) => ({ ...request, maxTokens: 99 }) },
      { name: "bad-return", beforeLlmCall: () => 42 as never },
      { name: "thrower", beforeLlmCall: () => { throw new Error("hook bug"); } },
    );
    const { result, logs } = await captureLogs(() => agent.beforeLlmCall(request, {}, signal));
    assert.equal(result.request.maxTokens, 99);
    assert.equal(result.decision, null);
    assert.ok(logs.some((log) => log.message === "hook.agent_hook_failed hook=beforeLlmCall adapter=thrower"));
    assert.ok(logs.some((log) => log.message === "hook.agent_hook_bad_return hook=beforeLlmCall adapter=bad-return"));
  });

  it("lets proceed(args) replace arguments for later plugins and stops at replace or deny", async () => {
    const seen: unknown[] = [];
    const agent = hooks(
      { name: "never", beforeToolCall: () => { throw new Error("must not run"); } },
      { name: "denier", beforeToolCall: ({ call }) => (seen.push(call.arguments), deny("no reading")) },
      { name: "rewriter", beforeToolCall: () => proceed({ path: "b" }) },
    );
    const { call: final, decision } = await agent.beforeToolCall(call, {}, signal);
    assert.deepEqual(seen, [{ path: "b" }]);
    assert.deepEqual(final.arguments, { path: "b" });
    assert.equal(decision.action, "deny");
    const replaced = await hooks({ beforeToolCall: () => replace("cached") }).beforeToolCall(call, {}, signal);
    assert.equal(replaced.decision.action, "replace");
    assert.equal(replaced.decision.action === "replace" && replaced.decision.result, "cached");
    const none = await hooks().beforeToolCall(call, {}, signal);
    assert.equal(none.decision.action, "proceed");
  });

  it("hands every afterToolCall observer the same mutable result", async () => {
    const agent = hooks(
      { name: "second", afterToolCall: ({ result }) => void (result.result = `${String(result.result)}+low`) },
      { name: "thrower", afterToolCall: () => { throw new Error("observer bug"); } },
      { name: "first", afterToolCall: ({ result }) => void (result.result = "high") },
    );
    const result: ToolCallResult = { runId: "r", tool: "t", arguments: {}, result: "orig", error: null, durationMs: 1 };
    await captureLogs(() => agent.afterToolCall(call, result, {}, signal));
    assert.equal(result.result, "high+low");
  });

  it("hands every interceptor the turn's signal and typed context", async () => {
    const turn = new AbortController();
    const context = testTurnContext({ signal: turn.signal });
    const seen: AbortSignal[] = [];
    const contexts: TurnContext[] = [];
    const agent = hooksFor(context, {
      name: "watcher",
      beforeLlmCall: ({ signal, context }) => void (seen.push(signal), contexts.push(context)),
      afterLlmCall: ({ signal, context }) => void (seen.push(signal), contexts.push(context)),
      beforeToolCall: ({ signal, context }) => void (seen.push(signal), contexts.push(context)),
      afterToolCall: ({ signal, context }) => void (seen.push(signal), contexts.push(context)),
    });
    const result: ToolCallResult = { runId: "r", tool: "t", arguments: {}, result: "x", error: null, durationMs: 1 };
    await agent.beforeLlmCall(request, {}, turn.signal);
    await agent.afterLlmCall(request, { runId: "r", text: "x", toolCalls: [], usage: null, error: null, durationMs: 1, finishReason: null, responseModel: "a:b" }, {}, turn.signal);
    await agent.beforeToolCall(call, {}, turn.signal);
    await agent.afterToolCall(call, result, {}, turn.signal);
    assert.equal(seen.length, 4);
    assert.ok(seen.every((each) => each === turn.signal));
    assert.ok(contexts.length === 4 && contexts.every((each) => each === context && each.signal === turn.signal));
  });
});
