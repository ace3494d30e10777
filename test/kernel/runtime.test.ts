import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { HookRuntime } from "../../src/kernel/runtime.ts";
import { runModel, runModelStream } from "../../src/kernel/model-adapters.ts";
import { AsyncStreamEvents } from "../../src/kernel/stream.ts";
import { definePlugin, type BubPlugin } from "../../src/kernel/hooks.ts";
import { toEnvelope } from "../../src/kernel/envelope.ts";
import { captureLogs } from "../support/temp.ts";
import { kernelFramework } from "../support/framework.ts";

const signal = new AbortController().signal;
const context = kernelFramework().turnContext({ turnId: "t", sessionId: "s", signal });
const message = toEnvelope({});
const args = { message, sessionId: "s", state: {}, context, signal };
const loadArgs = { message, sessionId: "s", context, signal };

describe("HookRuntime", () => {
  it("calls the plugin registered last first", async () => {
    const runtime = new HookRuntime();
    const order: string[] = [];
    for (const name of ["a", "b", "c"]) runtime.register({ loadState: () => void order.push(name) }, name);
    await runtime.callMany("loadState", loadArgs);
    assert.deepEqual(order, ["c", "b", "a"]);
  });

  it("callFirst skips null and undefined answers but stops at a falsy non-null one", async () => {
    const runtime = new HookRuntime();
    const called: string[] = [];
    runtime.register({ buildPrompt: () => (called.push("low"), "low") }, "low");
    runtime.register({ buildPrompt: () => (called.push("empty"), "") }, "empty");
    runtime.register({ buildPrompt: async () => (called.push("undef"), undefined) }, "undef");
    runtime.register({ buildPrompt: () => (called.push("null"), null) }, "null");
    assert.equal(await runtime.callFirst("buildPrompt", args), "");
    assert.deepEqual(called, ["null", "undef", "empty"]);
  });

  it("callFirst returns undefined when nobody answers or nobody implements", async () => {
    const runtime = new HookRuntime();
    assert.equal(await runtime.callFirst("buildPrompt", args), undefined);
    runtime.register({ buildPrompt: () => null }, "p");
    assert.equal(await runtime.callFirst("buildPrompt", args), undefined);
  });

  it("callFirst returns undefined when the last implementation's promise settles to null", async () => {
    const runtime = new HookRuntime();
    runtime.register({ buildPrompt: async () => null }, "only");
    assert.equal(await runtime.callFirst("buildPrompt", args), undefined);
    runtime.register({ buildPrompt: () => null }, "first");
    assert.equal(await runtime.callFirst("buildPrompt", args), undefined);
  });

  it("callMany fills the last implementation's async answer in its place", async () => {
    const runtime = new HookRuntime();
    runtime.register({ loadState: async () => ({ last: true }) }, "low");
    runtime.register({ loadState: () => ({ first: true }) }, "high");
    assert.deepEqual(await runtime.callMany("loadState", loadArgs), [{ first: true }, { last: true }]);
    await assert.rejects(
      (() => {
        const failing = new HookRuntime();
        failing.register({ loadState: async () => Promise.reject(new Error("state store down")) }, "only");
        return failing.callMany("loadState", loadArgs);
      })(),
      /state store down/,
    );
  });

  it("callEach calls every implementation in order, waiting for each promise, and collects nothing", async () => {
    const runtime = new HookRuntime();
    const order: string[] = [];
    runtime.register({ saveState: () => void order.push("last") }, "low");
    runtime.register({ saveState: async () => { await Promise.resolve(); order.push("async"); } }, "mid");
    runtime.register({ saveState: () => void order.push("first") }, "high");
    const saveArgs = { sessionId: "s", state: {}, message, modelOutput: "", context, signal };
    assert.equal(await runtime.callEach("saveState", saveArgs), undefined);
    assert.deepEqual(order, ["first", "async", "last"]);
    const failing = new HookRuntime();
    failing.register({ saveState: async () => Promise.reject(new Error("disk full")) }, "p");
    await assert.rejects(failing.callEach("saveState", saveArgs), /disk full/);
  });

  it("calls hooks added with addHookNames on that runtime only, for plugins registered before and after", async () => {
    const summarize = ({ text }: { text: string }) => text.slice(0, 2);
    const plugin = { summarize } as unknown as BubPlugin;
    const runtime = new HookRuntime();
    const other = new HookRuntime();
    runtime.register(plugin, "early");
    other.register(plugin, "early");
    runtime.addHookNames("summarize");
    runtime.register({ summarize: () => null } as unknown as BubPlugin, "late");
    assert.deepEqual(runtime.hookReport(), { summarize: ["late", "early"] });
    assert.deepEqual(other.hookReport(), {});
    assert.deepEqual(await runtime.callMany("summarize" as never, { text: "hello" } as never), [null, "he"]);
  });

  it("callMany collects every answer in call order, null and undefined included", async () => {
    const runtime = new HookRuntime();
    runtime.register({ loadState: () => ({ a: 1 }) }, "one");
    runtime.register({ loadState: () => null }, "two");
    runtime.register({ loadState: async () => undefined }, "three");
    runtime.register({ loadState: async () => ({ b: 2 }) }, "four");
    assert.deepEqual(await runtime.callMany("loadState", loadArgs), [{ b: 2 }, undefined, null, { a: 1 }]);
  });

  it("lets an exception from an ordinary hook propagate and stops calling later plugins", async () => {
    const runtime = new HookRuntime();
    let lowCalled = false;
    runtime.register({ loadState: () => void (lowCalled = true) }, "low");
    runtime.register({ loadState: () => { throw new Error("boom"); } }, "high");
    await assert.rejects(runtime.callMany("loadState", loadArgs), /boom/);
    assert.equal(lowCalled, false);
  });

  it("sync calls skip an implementation that returns a promise, with a warning", async () => {
    const runtime = new HookRuntime();
    runtime.register({ systemPrompt: () => "sync" }, "good");
    runtime.register({ systemPrompt: (async () => "async") as unknown as BubPlugin["systemPrompt"] }, "bad");
    const { result, logs } = await captureLogs(() => runtime.callManySync("systemPrompt", { prompt: "", state: {} }));
    assert.deepEqual(result, ["sync"]);
    assert.ok(logs.some((log) => log.level === "warn" && log.message === "hook.async_not_supported hook=systemPrompt adapter=bad"));
    const first = await captureLogs(() => runtime.callFirstSync("systemPrompt", { prompt: "", state: {} }));
    assert.equal(first.result, "sync");
  });

  it("notifyError isolates every observer", async () => {
    const runtime = new HookRuntime();
    const seen: string[] = [];
    runtime.register({ onError: ({ stage }) => void seen.push(`low:${stage}`) }, "low");
    runtime.register({ onError: async () => { throw new Error("observer broke"); } }, "broken");
    runtime.register({ onError: () => void seen.push("high") }, "high");
    const { logs } = await captureLogs(() => runtime.notifyError("turn", new Error("x"), null));
    assert.deepEqual(seen, ["high", "low:turn"]);
    assert.ok(logs.some((log) => log.message === "hook.on_error_failed stage=turn adapter=broken"));
  });

  it("reports hooks sorted by name with plugins in call order", () => {
    const runtime = new HookRuntime();
    runtime.register({ saveState: () => {}, buildPrompt: () => "x" }, "first");
    runtime.register({ saveState: () => {} }, "second");
    assert.deepEqual(runtime.hookReport(), { buildPrompt: ["first"], saveState: ["second", "first"] });
  });

  it("returns a disposer from register and rejects duplicate names", async () => {
    const runtime = new HookRuntime();
    const dispose = runtime.register({ buildPrompt: () => "a" }, "a");
    assert.throws(() => runtime.register({}, "a"), /already registered/);
    dispose();
    assert.equal(await runtime.callFirst("buildPrompt", args), undefined);
  });

  it("finds hook methods on class instances", async () => {
    class Shout {
      readonly suffix = "!";
      buildPrompt({ message }: { message: { content: string } }) {
        return `${message.content}${this.suffix}`;
      }
    }
    const runtime = new HookRuntime();
    runtime.register(new Shout() as BubPlugin, "shout");
    assert.equal(await runtime.callFirst("buildPrompt", { ...args, message: toEnvelope({ content: "hi" }) }), "hi!");
  });
});

describe("model adapters", () => {
  const modelArgs = { prompt: "p", sessionId: "s", state: {}, context, signal };

  it("joins the text of a stream-only plugin for runModel", async () => {
    const runtime = new HookRuntime();
    runtime.register(
      definePlugin({
        runModelStream: () =>
          AsyncStreamEvents.of([
            { kind: "text", data: { delta: "he" } },
            { kind: "reasoning", data: { delta: "ignored" } },
            { kind: "text", data: { delta: "llo" } },
          ]),
      }),
      "stream",
    );
    assert.equal(await runModel(runtime, modelArgs), "hello");
  });

  it("wraps a text-only plugin into one text event for runModelStream", async () => {
    const runtime = new HookRuntime();
    runtime.register({ runModel: () => "hi" }, "text");
    const stream = await runModelStream(runtime, modelArgs);
    const events = [];
    for await (const event of stream!) events.push(event);
    assert.deepEqual(events, [{ kind: "text", data: { delta: "hi" } }]);
  });

  it("lets the highest-precedence plugin with either hook decide the path", async () => {
    const runtime = new HookRuntime();
    runtime.register({ runModel: () => "low" }, "low");
    runtime.register({ runModelStream: () => AsyncStreamEvents.of([{ kind: "text", data: { delta: "high" } }]) }, "high");
    assert.equal(await runModel(runtime, modelArgs), "high");
  });

  it("falls back cleanly when the deciding hook returns nothing, in both directions", async () => {
    const streamOnly = new HookRuntime();
    streamOnly.register({ runModelStream: () => null }, "s");
    assert.equal(await runModel(streamOnly, modelArgs), null);
    const textOnly = new HookRuntime();
    textOnly.register({ runModel: () => undefined }, "t");
    assert.equal(await runModelStream(textOnly, modelArgs), null);
    assert.equal(await runModel(new HookRuntime(), modelArgs), null);
  });

  it("rejects wrong return types with a TypeError", async () => {
    const runtime = new HookRuntime();
    runtime.register({ runModel: (() => 42) as unknown as BubPlugin["runModel"] }, "bad");
    await assert.rejects(async () => runModel(runtime, modelArgs), { name: "TypeError", message: "hook.runModel must return string or null" });
    const streams = new HookRuntime();
    streams.register({ runModelStream: (() => "text") as unknown as BubPlugin["runModelStream"] }, "bad");
    await assert.rejects(runModelStream(streams, modelArgs), { name: "TypeError", message: "hook.runModelStream must return AsyncStreamEvents or null" });
  });
});
