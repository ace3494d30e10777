import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { HookRuntime } from "../../src/kernel/runtime.ts";
import type { BubFramework } from "../../src/kernel/framework.ts";
import { BubError } from "../../src/kernel/errors.ts";
import { PluginHookError } from "../../src/kernel/hook-error.ts";
import { definePlugin, type BubPlugin } from "../../src/kernel/hooks.ts";
import { captureLogs } from "../support/temp.ts";
import { kernelFramework } from "../support/framework.ts";
import { toEnvelope } from "../../src/kernel/envelope.ts";

const signal = new AbortController().signal;
const context = kernelFramework().turnContext({ turnId: "t", sessionId: "s", signal });
const args = { message: toEnvelope({ content: "hi" }), sessionId: "s", state: {}, context, signal };
const loadArgs = { message: toEnvelope({}), sessionId: "s", context, signal };
const ADVICE = "fix the plugin or take it out (`bub hooks` shows where each plugin comes from)";

describe("next(): a chained hook calls the implementations below it", () => {
  it("wraps the lower answer, with the same or new arguments", async () => {
    const runtime = new HookRuntime();
    runtime.register({ buildPrompt: ({ message }) => `base:${message.content}` }, "builtin");
    runtime.register(definePlugin({ buildPrompt: async (_args, next) => `${await next()} +line` }), "wrap");
    assert.equal(await runtime.call("buildPrompt", args), "base:hi +line");
    runtime.register(definePlugin({ buildPrompt: (hookArgs, next) => next({ ...hookArgs, message: toEnvelope({ content: "changed" }) }) }), "rewrite");
    assert.equal(await runtime.call("buildPrompt", args), "base:changed +line");
  });

  it("skips lower implementations that answer nothing, and resolves undefined when none answers", async () => {
    const runtime = new HookRuntime();
    runtime.register({ resolveSession: () => null }, "low");
    let seen: unknown = "unset";
    runtime.register(definePlugin({ resolveSession: async (_args, next) => ((seen = await next()), "mine") }), "top");
    assert.equal(await runtime.call("resolveSession", { message: toEnvelope({}) }), "mine");
    assert.equal(seen, undefined);
  });

  it("makes the caller's answer final once it called next, even null: the lower ones run once", async () => {
    const runtime = new HookRuntime();
    let calls = 0;
    runtime.register({ buildPrompt: () => (calls++, "low") }, "low");
    runtime.register(definePlugin({ buildPrompt: async (_args, next) => void (await next()) }), "top");
    assert.equal(await runtime.call("buildPrompt", args), undefined);
    assert.equal(calls, 1);
  });

  it("rejects a second next() call, and the error names the plugin that made it", async () => {
    const runtime = new HookRuntime();
    runtime.register({ buildPrompt: () => "low" }, "low");
    runtime.register(definePlugin({ buildPrompt: async (_args, next) => `${await next()}${await next()}` }), "greedy");
    await assert.rejects(runtime.call("buildPrompt", args), (error: unknown) => {
      assert.ok(PluginHookError.isInstance(error));
      assert.equal(error.message, `plugin 'greedy' failed in buildPrompt: next() called more than once in buildPrompt — ${ADVICE}`);
      return true;
    });
  });

  it("blames the plugin below, not the one that passed its error on through next()", async () => {
    const runtime = new HookRuntime();
    runtime.register({ buildPrompt: () => { throw new Error("disk gone"); } }, "low");
    runtime.register(definePlugin({ buildPrompt: (_args, next) => next() }), "wrap");
    await assert.rejects(runtime.call("buildPrompt", args), { name: "PluginHookError", message: `plugin 'low' failed in buildPrompt: disk gone — ${ADVICE}` });
  });
});

describe("hook failures name the plugin and the hook", () => {
  it("wraps a plugin's error with its name, hook, kind and cause, and keeps advice it gives", async () => {
    const runtime = new HookRuntime();
    const cause = new BubError("config", "no key set — set GREET_KEY");
    runtime.register({ loadState: () => Promise.reject(cause) }, "greet");
    await assert.rejects(runtime.call("loadState", loadArgs), (error: unknown) => {
      assert.ok(error instanceof PluginHookError);
      assert.equal(error.message, "plugin 'greet' failed in loadState: no key set — set GREET_KEY");
      assert.deepEqual([error.plugin, error.hook, error.kind, error.cause], ["greet", "loadState", "config", cause]);
      return true;
    });
  });

  it("wraps synchronous hooks too, but leaves the builtin's errors and cancellations as they are", async () => {
    const runtime = new HookRuntime();
    runtime.register({ systemPrompt: () => { throw new Error("bad fragment"); } }, "frag");
    assert.throws(() => runtime.callSync("systemPrompt", { prompt: "", state: {} }), { message: `plugin 'frag' failed in systemPrompt: bad fragment — ${ADVICE}` });
    const builtin = new HookRuntime();
    const own = new Error("builtin words");
    builtin.register({ loadState: () => { throw own; } }, "builtin");
    await assert.rejects(builtin.call("loadState", loadArgs), (error) => error === own);
    const abort = new DOMException("stopped", "AbortError");
    const cancelled = new HookRuntime();
    cancelled.register({ loadState: () => { throw abort; } }, "p");
    await assert.rejects(cancelled.call("loadState", loadArgs), (error) => error === abort);
  });
});

describe("a failing saveState or dispatchOutbound does not lose the reply", () => {
  function framework(...plugins: object[]): BubFramework {
    const bub = kernelFramework();
    plugins.forEach((plugin, index) => bub.runtime.register(plugin as BubPlugin, (plugin as { name?: string }).name ?? `p${index}`));
    return bub;
  }

  it("still runs the other saveState and dispatchOutbound hooks, then reports each failure at its stage", async () => {
    const delivered: unknown[] = [];
    const saved: string[] = [];
    const stages: string[] = [];
    const bub = framework(
      { name: "deliver", dispatchOutbound: ({ message }: { message: { content: string } }) => void delivered.push(message.content) },
      { name: "tape", saveState: () => void saved.push("tape") },
      { name: "observer", onError: ({ stage, error }: { stage: string; error: Error }) => void stages.push(`${stage}: ${error.message}`) },
      { name: "model", runModel: () => "the answer" },
      { name: "logger", saveState: () => { throw new Error("log server down"); }, dispatchOutbound: () => { throw new Error("mirror down"); } },
    );
    const { result, logs } = await captureLogs(() => bub.processInbound({ content: "q", session_id: "s1" }));
    assert.equal(result.modelOutput, "the answer");
    assert.deepEqual(delivered, ["the answer"]);
    assert.deepEqual(saved, ["tape"]);
    assert.deepEqual(stages, [
      `save_state: plugin 'logger' failed in saveState: log server down — ${ADVICE}`,
      `dispatch_outbound: plugin 'logger' failed in dispatchOutbound: mirror down — ${ADVICE}`,
    ]);
    assert.deepEqual(logs.map((record) => `${record.level} ${record.message}`), ["error turn.save_state_failed session_id=s1", "error turn.dispatch_outbound_failed session_id=s1"]);
  });
});
