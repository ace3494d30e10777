// The hook table and the one call path that reads it: each way implementations combine,
// the answer checks, what a failure does, and sync hooks refusing Promise answers.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { HookRuntime } from "../../src/kernel/runtime.ts";
import { HOOK_NAMES, HOOK_TABLE, SYNC_HOOKS } from "../../src/kernel/hook-table.ts";
import { AsyncStreamEvents, collectText } from "../../src/kernel/stream.ts";
import { definePlugin, type BubPlugin } from "../../src/kernel/hooks.ts";
import { toEnvelope } from "../../src/kernel/envelope.ts";
import { PluginHookError } from "../../src/kernel/hook-error.ts";
import { deny, finish, proceed, type LlmCallRequest } from "../../src/kernel/interception.ts";
import { captureLogs } from "../support/temp.ts";
import { testTurnContext } from "../support/framework.ts";

const signal = new AbortController().signal;
const context = testTurnContext();
const message = toEnvelope({ channel: "t", chat_id: "1", content: "hi" });
const request: LlmCallRequest = { runId: "r", model: "a:b", messages: [], toolNames: [], maxTokens: 1 };

function runtimeWith(...plugins: object[]): HookRuntime {
  const runtime = new HookRuntime();
  plugins.forEach((plugin, index) => runtime.register(plugin as BubPlugin, `p${index}`));
  return runtime;
}

describe("the hook table", () => {
  it("declares every hook once; the sync-only ones are those it marks sync", () => {
    assert.equal(new Set(HOOK_NAMES).size, HOOK_NAMES.length);
    assert.deepEqual([...SYNC_HOOKS].sort(), ["buildTapeContext", "onboardConfig", "provideChannels", "provideSteeringInbox", "provideTapeSidecar", "provideTapeStore", "registerCliCommands", "systemPrompt"]);
    for (const name of HOOK_NAMES) assert.equal(HOOK_TABLE[name].combine === "chain", ["resolveSession", "buildPrompt", "runModel", "runModelStream", "continuePrompt", "admitMessage"].includes(name), name);
  });
});

describe("runtime.call combines as the table says", () => {
  it("first: the first answer that is not null, without next()", async () => {
    const seen: unknown[] = [];
    const sandbox = { name: "s", workspace: "/w", exec: () => {}, resolvePath: (path: string) => path };
    const runtime = runtimeWith({ provideSandbox: () => sandbox }, { provideSandbox: (_args: unknown, next: unknown) => (seen.push(next), null) });
    assert.equal(await runtime.call("provideSandbox", { sessionId: "s", workspace: "/w" }), sandbox);
    assert.deepEqual(seen, [undefined]);
  });

  it("chain: next() runs the implementations below", async () => {
    const wrapper: BubPlugin = definePlugin({ buildPrompt: async (_args, next) => `${await next()}+` });
    const runtime = runtimeWith({ buildPrompt: () => "base" }, wrapper);
    assert.equal(await runtime.call("buildPrompt", { message, sessionId: "s", state: {}, context, signal }), "base+");
  });

  it("all: every answer, reduced where the table says (loadState merged, higher precedence wins)", async () => {
    const runtime = runtimeWith({ loadState: () => ({ a: 1, b: 1 }) }, { loadState: () => null }, { loadState: async () => ({ b: 2 }) });
    assert.deepEqual(await runtime.call("loadState", { message, sessionId: "s", context, signal }), { a: 1, b: 2 });
    const outbounds = await runtimeWith({ renderOutbound: () => [{ content: "x" }, { content: "y" }] }).call("renderOutbound", { message, sessionId: "s", state: {}, modelOutput: "m", context, signal });
    assert.deepEqual(outbounds.map((each) => each.content), ["x", "y"]);
    const fallback = await runtimeWith().call("renderOutbound", { message, sessionId: "s", state: {}, modelOutput: "m", context, signal });
    assert.deepEqual(fallback.map((each) => [each.content, each.chatId]), [["m", "1"]]);
  });

  it("settled: every implementation runs; the call answers the errors, each naming its plugin", async () => {
    const saved: string[] = [];
    const runtime = runtimeWith({ saveState: () => void saved.push("low") }, { saveState: async () => { throw new Error("disk full"); } }, { saveState: () => void saved.push("high") });
    const errors = await runtime.call("saveState", { sessionId: "s", state: {}, message, modelOutput: "", context, signal });
    assert.deepEqual(saved, ["high", "low"]);
    assert.equal(errors.length, 1);
    assert.ok(PluginHookError.isInstance(errors[0]) && errors[0].plugin === "p1" && errors[0].hook === "saveState");
  });

  it("fold: each answer changes what the next implementation gets, until one is final", async () => {
    let lowCalled = false;
    const runtime = runtimeWith(
      { beforeLlmCall: () => void (lowCalled = true) },
      { beforeLlmCall: ({ request: seen }: { request: LlmCallRequest }) => finish(seen.model) },
      { beforeLlmCall: ({ request: seen }: { request: LlmCallRequest }) => ({ ...seen, model: "x:y" }) },
    );
    const { args, answer } = await runtime.call("beforeLlmCall", { request, state: {}, context, signal });
    assert.equal(args.request.model, "x:y");
    assert.deepEqual(answer, finish("x:y"));
    assert.equal(lowCalled, false);
    const tools = runtimeWith({ beforeToolCall: () => deny("no") }, { beforeToolCall: () => proceed({ path: "b" }) });
    const folded = await tools.call("beforeToolCall", { call: { runId: "r", tool: "t", arguments: { path: "a" } }, state: {}, context, signal });
    assert.deepEqual([folded.args.call.arguments, folded.answer?.action], [{ path: "b" }, "deny"]);
  });

  it("fold in registration order: each onboardConfig fragment is merged into the config the next plugin sees", () => {
    const seen: unknown[] = [];
    const runtime = runtimeWith(
      { onboardConfig: ({ currentConfig }: { currentConfig: Record<string, unknown> }) => (seen.push(structuredClone(currentConfig)), { a: { x: 1 } }) },
      { onboardConfig: ({ currentConfig }: { currentConfig: Record<string, unknown> }) => (seen.push(structuredClone(currentConfig)), { a: { y: 2 } }) },
    );
    assert.deepEqual(runtime.callSync("onboardConfig", { currentConfig: {} }).args.currentConfig, { a: { x: 1, y: 2 } });
    assert.deepEqual(seen, [{}, { a: { x: 1 } }]);
  });

  it("observe: every implementation runs and nothing is answered", async () => {
    const seen: string[] = [];
    const runtime = runtimeWith({ onError: ({ stage }: { stage: string }) => void seen.push(`low:${stage}`) }, { onError: () => void seen.push("high") });
    assert.equal(await runtime.call("onError", { stage: "turn", error: new Error("x"), message: null }), undefined);
    assert.deepEqual(seen, ["high", "low:turn"]);
  });
});

describe("answer checks", () => {
  it("throw the hook's TypeError for a first-result hook, whether a plugin answers wrongly or none answers", async () => {
    await assert.rejects(runtimeWith({ admitMessage: () => ({ action: "maybe" }) }).call("admitMessage", { sessionId: "s", message, turn: { sessionId: "s", isRunning: false, runningCount: 0, pendingCount: 0, steeringCount: 0 } }), { name: "TypeError", message: "hook.admitMessage must return AdmitDecision or null" });
    assert.throws(() => runtimeWith().callSync("buildTapeContext", {}), { name: "TypeError", message: "hook.buildTapeContext must return TapeContext" });
  });

  it("check every answer of an all-answers hook", async () => {
    await assert.rejects(runtimeWith({ provideModelOptions: () => ({ models: [] }) }, { provideModelOptions: () => "x" }).call("provideModelOptions", { sessionId: "s", workspace: "/w" }), { message: "hook.provideModelOptions must return ModelOptions or null" });
    assert.throws(() => runtimeWith({ onboardConfig: () => "x" }).callSync("onboardConfig", { currentConfig: {} }), { message: "hook.onboardConfig must return an object or null" });
  });

  it("leave the text of runModel to its own check, and hand a runModel's next() the text of the stream below", async () => {
    const wrapper: BubPlugin = definePlugin({ runModel: async (_args, next) => `${String(await next())}!` });
    const runtime = runtimeWith({ runModelStream: () => AsyncStreamEvents.of([{ kind: "text", data: { delta: "deep" } }]) }, wrapper);
    const stream = await runtime.call("runModelStream", { prompt: "p", sessionId: "s", state: {}, context, signal });
    assert.equal(stream && (await collectText(stream)), "deep!");
  });
});

describe("failures", () => {
  it("fail the call for a hook that fails the turn, named after the plugin; later plugins do not run", async () => {
    let lowCalled = false;
    const runtime = runtimeWith({ loadState: () => void (lowCalled = true) }, { loadState: () => { throw new Error("boom"); } });
    await assert.rejects(runtime.call("loadState", { message, sessionId: "s", context, signal }), { name: "PluginHookError", message: /plugin 'p1' failed in loadState: boom/ });
    assert.equal(lowCalled, false);
  });

  it("are logged and count as no answer for a hook that does not; a bad fold answer is skipped", async () => {
    const runtime = runtimeWith(
      { beforeToolCall: () => proceed({ path: "ok" }) },
      { beforeToolCall: () => 42 },
      { beforeToolCall: () => { throw new Error("bug"); } },
      { afterToolCall: () => { throw new Error("observer bug"); } },
    );
    const { result, logs } = await captureLogs(async () => {
      const folded = await runtime.call("beforeToolCall", { call: { runId: "r", tool: "t", arguments: {} }, state: {}, context, signal });
      await runtime.call("afterToolCall", { call: { runId: "r", tool: "t", arguments: {} }, result: { runId: "r", tool: "t", arguments: {}, result: null, error: null, durationMs: 0 }, state: {}, context, signal });
      return folded;
    });
    assert.deepEqual(result.args.call.arguments, { path: "ok" });
    assert.deepEqual(logs.map((log) => log.message), ["hook.agent_hook_failed hook=beforeToolCall adapter=p2", "hook.agent_hook_bad_return hook=beforeToolCall adapter=p1", "hook.agent_hook_failed hook=afterToolCall adapter=p3"]);
  });

  it("of an onError observer are logged with the stage, and the other observers still run", async () => {
    const seen: string[] = [];
    const runtime = runtimeWith({ onError: () => void seen.push("low") }, { onError: async () => { throw new Error("observer broke"); } });
    const { logs } = await captureLogs(() => runtime.call("onError", { stage: "save_state", error: new Error("x"), message: null }));
    assert.deepEqual(seen, ["low"]);
    assert.deepEqual(logs.map((log) => log.message), ["hook.on_error_failed stage=save_state adapter=p1"]);
  });
});

describe("sync hooks", () => {
  it("skip a Promise answer with a warning, and a late rejection does not escape", async () => {
    const runtime = runtimeWith({ provideChannels: () => [{ name: "a" }] }, { provideChannels: async () => { throw new Error("late"); } });
    const { result, logs } = await captureLogs(async () => {
      const channels = runtime.callSync("provideChannels", { messageHandler: async () => {} });
      await new Promise((resolve) => setImmediate(resolve));
      return channels;
    });
    assert.deepEqual([...result.keys()], ["a"]);
    assert.ok(logs.some((log) => log.level === "warn" && log.message === "hook.async_not_supported hook=provideChannels adapter=p1"));
  });

  it("are not callable with call, nor async hooks with callSync (a compile error)", () => {
    const runtime = new HookRuntime();
    // @ts-expect-error systemPrompt is sync-only
    void (() => runtime.call("systemPrompt", { prompt: "", state: {} }));
    // @ts-expect-error buildPrompt is not
    void (() => runtime.callSync("buildPrompt", { message, sessionId: "s", state: {}, context, signal }));
  });
});
