// The two instrumentation seams tracing uses: framework.wrapTurns around whole turns and
// runtime.wrapCalls around each hook implementation's call.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { HookRuntime } from "../../src/kernel/runtime.ts";
import { toEnvelope } from "../../src/kernel/envelope.ts";
import { kernelFramework } from "../support/framework.ts";

/** A key a plugin of this file keeps on the state. */
declare module "../../src/kernel/types.ts" {
  interface TurnState {
    a?: number;
  }
}

describe("framework.wrapTurns", () => {
  it("runs the whole turn inside each wrapper, the one added later outside, until removed", async () => {
    const framework = kernelFramework();
    const seen: string[] = [];
    await framework.registerPlugin({ runModel: () => (seen.push("model"), "answer"), dispatchOutbound: () => void seen.push("dispatch") }, "model");
    const removeInner = framework.wrapTurns(async (inbound, turn) => {
      seen.push(`inner:${inbound.content}`);
      const result = await turn();
      seen.push(`inner:${result.modelOutput}`);
      return result;
    });
    const removeOuter = framework.wrapTurns(async (_inbound, turn) => {
      seen.push("outer");
      try {
        return await turn();
      } finally {
        seen.push("outer:end");
      }
    });
    const result = await framework.processInbound({ channel: "t", chat_id: "1", content: "hi" });
    assert.equal(result.modelOutput, "answer");
    assert.deepEqual(seen, ["outer", "inner:hi", "model", "dispatch", "inner:answer", "outer:end"]);
    removeInner();
    removeOuter();
    seen.length = 0;
    await framework.processInbound({ channel: "t", chat_id: "1", content: "again" });
    assert.deepEqual(seen, ["model", "dispatch"]);
  });

  it("a failing turn reaches the wrapper as a rejection", async () => {
    const framework = kernelFramework();
    await framework.registerPlugin({ buildPrompt: () => { throw new Error("boom"); } }, "broken");
    let caught: unknown;
    framework.wrapTurns(async (_inbound, turn) => {
      try {
        return await turn();
      } catch (error) {
        caught = error;
        throw error;
      }
    });
    await assert.rejects(framework.processInbound({ content: "x" }), /boom/);
    assert.match(String(caught), /boom/);
  });
});

describe("runtime.wrapCalls", () => {
  it("sees every implementation's call with its hook and plugin; sync hooks stay sync; removable", async () => {
    const runtime = new HookRuntime();
    const signal = new AbortController().signal;
    runtime.register({ systemPrompt: () => "a", loadState: async () => ({ a: 1 }) }, "a");
    const calls: string[] = [];
    const remove = runtime.wrapCalls((hook, plugin, call) => {
      calls.push(`${hook}:${plugin}`);
      return call();
    });
    runtime.register({ systemPrompt: () => "b" }, "b");
    assert.equal(runtime.callSync("systemPrompt", { prompt: "p", state: {} }), "a\n\nb");
    assert.deepEqual(await runtime.call("loadState", { message: toEnvelope({}), sessionId: "s", context: kernelFramework().turnContext({ turnId: "t", sessionId: "s", signal }), signal }), { a: 1 });
    assert.deepEqual(calls, ["systemPrompt:b", "systemPrompt:a", "loadState:a"]);
    assert.throws(() => runtime.wrapCalls((_hook, _plugin, call) => call()), /already wrapped/);
    remove();
    calls.length = 0;
    runtime.callSync("systemPrompt", { prompt: "p", state: {} });
    assert.deepEqual(calls, []);
  });
});
