import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { HookRuntime } from "../../src/kernel/runtime.ts";
import { AsyncStreamEvents, collectText } from "../../src/kernel/stream.ts";
import { definePlugin, type BubPlugin } from "../../src/kernel/hooks.ts";
import { toEnvelope } from "../../src/kernel/envelope.ts";
import { captureLogs } from "../support/temp.ts";
import { kernelFramework } from "../support/framework.ts";

const signal = new AbortController().signal;
const context = kernelFramework().turnContext({ turnId: "t", sessionId: "s", signal });
const message = toEnvelope({});
const args = { message, sessionId: "s", state: {}, context, signal };
const loadArgs = { message, sessionId: "s", context, signal };
/** A runtime with a third party's hook `collect` (called with callMany), `plugins` registered in order. */
function collecting(...plugins: object[]): HookRuntime {
  const runtime = new HookRuntime();
  runtime.addHookNames("collect");
  plugins.forEach((plugin, index) => runtime.register(plugin as BubPlugin, `p${index}`));
  return runtime;
}

describe("HookRuntime", () => {
  it("calls the plugin registered last first", async () => {
    const runtime = new HookRuntime();
    const order: string[] = [];
    for (const name of ["a", "b", "c"]) runtime.register({ loadState: () => void order.push(name) }, name);
    await runtime.call("loadState", loadArgs);
    assert.deepEqual(order, ["c", "b", "a"]);
  });

  it("callFirst skips null and undefined answers but stops at a falsy non-null one", async () => {
    const runtime = new HookRuntime();
    const called: string[] = [];
    runtime.register({ buildPrompt: () => (called.push("low"), "low") }, "low");
    runtime.register({ buildPrompt: () => (called.push("empty"), "") }, "empty");
    runtime.register({ buildPrompt: async () => (called.push("undef"), undefined) }, "undef");
    runtime.register({ buildPrompt: () => (called.push("null"), null) }, "null");
    assert.equal(await runtime.call("buildPrompt", args), "");
    assert.deepEqual(called, ["null", "undef", "empty"]);
  });

  it("callFirst returns undefined when nobody answers or nobody implements", async () => {
    const runtime = new HookRuntime();
    assert.equal(await runtime.call("buildPrompt", args), undefined);
    runtime.register({ buildPrompt: () => null }, "p");
    assert.equal(await runtime.call("buildPrompt", args), undefined);
  });

  it("callFirst returns undefined when the last implementation's promise settles to null", async () => {
    const runtime = new HookRuntime();
    runtime.register({ buildPrompt: async () => null }, "only");
    assert.equal(await runtime.call("buildPrompt", args), undefined);
    runtime.register({ buildPrompt: () => null }, "first");
    assert.equal(await runtime.call("buildPrompt", args), undefined);
  });

  it("an all-answers call fills the last implementation's async answer in its place", async () => {
    const runtime = collecting({ collect: async () => ({ last: true }) }, { collect: () => ({ first: true }) });
    assert.deepEqual(await runtime.callMany("collect" as never, {} as never), [{ first: true }, { last: true }]);
    await assert.rejects(
      (() => {
        const failing = new HookRuntime();
        failing.register({ loadState: async () => Promise.reject(new Error("state store down")) }, "only");
        return failing.call("loadState", loadArgs);
      })(),
      /state store down/,
    );
  });

  it("callEach calls every implementation in order, waiting for each promise, and collects nothing", async () => {
    const runtime = new HookRuntime();
    runtime.addHookNames("audit");
    const order: string[] = [];
    runtime.register({ audit: () => void order.push("last") } as unknown as BubPlugin, "low");
    runtime.register({ audit: async () => { await Promise.resolve(); order.push("async"); } } as unknown as BubPlugin, "mid");
    runtime.register({ audit: () => void order.push("first") } as unknown as BubPlugin, "high");
    assert.equal(await runtime.callEach("audit" as never, {} as never), undefined);
    assert.deepEqual(order, ["first", "async", "last"]);
    const failing = new HookRuntime();
    failing.addHookNames("audit");
    failing.register({ audit: async () => Promise.reject(new Error("disk full")) } as unknown as BubPlugin, "p");
    await assert.rejects(failing.callEach("audit" as never, {} as never), /disk full/);
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

  it("an all-answers call collects every answer in call order, null and undefined included", async () => {
    const runtime = collecting({ collect: () => ({ a: 1 }) }, { collect: () => null }, { collect: async () => undefined }, { collect: async () => ({ b: 2 }) });
    assert.deepEqual(await runtime.callMany("collect" as never, {} as never), [{ b: 2 }, undefined, null, { a: 1 }]);
  });

  it("lets an exception from an ordinary hook propagate and stops calling later plugins", async () => {
    const runtime = new HookRuntime();
    let lowCalled = false;
    runtime.register({ loadState: () => void (lowCalled = true) }, "low");
    runtime.register({ loadState: () => { throw new Error("boom"); } }, "high");
    await assert.rejects(runtime.call("loadState", loadArgs), /boom/);
    assert.equal(lowCalled, false);
  });

  it("sync calls skip an implementation that returns a promise, with a warning", async () => {
    const runtime = new HookRuntime();
    runtime.register({ systemPrompt: () => "sync" }, "good");
    runtime.register({ systemPrompt: (async () => "async") as unknown as BubPlugin["systemPrompt"] }, "bad");
    const { result, logs } = await captureLogs(() => runtime.callSync("systemPrompt", { prompt: "", state: {} }));
    assert.equal(result, "sync");
    assert.ok(logs.some((log) => log.level === "warn" && log.message === "hook.async_not_supported hook=systemPrompt adapter=bad"));
    const context = { anchor: null, state: {} };
    runtime.register({ buildTapeContext: () => context }, "first-good");
    runtime.register({ buildTapeContext: (async () => ({ anchor: null, state: {} })) as unknown as BubPlugin["buildTapeContext"] }, "first-bad");
    const first = await captureLogs(() => runtime.callSync("buildTapeContext", {}));
    assert.equal(first.result, context);
  });

  it("notifyError isolates every observer", async () => {
    const runtime = new HookRuntime();
    const seen: string[] = [];
    runtime.register({ onError: ({ stage }) => void seen.push(`low:${stage}`) }, "low");
    runtime.register({ onError: async () => { throw new Error("observer broke"); } }, "broken");
    runtime.register({ onError: () => void seen.push("high") }, "high");
    const { logs } = await captureLogs(() => runtime.call("onError", { stage: "turn", error: new Error("x"), message: null }));
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
    assert.equal(await runtime.call("buildPrompt", args), undefined);
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
    assert.equal(await runtime.call("buildPrompt", { ...args, message: toEnvelope({ content: "hi" }) }), "hi!");
  });
});

describe("the model hook (runModel adapted to runModelStream)", () => {
  const modelArgs = { prompt: "p", sessionId: "s", state: {}, context, signal };
  const text = async (runtime: HookRuntime) => {
    const stream = await runtime.call("runModelStream", modelArgs);
    return stream ? collectText(stream) : stream;
  };

  it("joins the text of a stream-only plugin", async () => {
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
    assert.equal(await text(runtime), "hello");
  });

  it("wraps a text-only plugin into one text event", async () => {
    const runtime = new HookRuntime();
    runtime.register({ runModel: () => "hi" }, "text");
    const stream = await runtime.call("runModelStream", modelArgs);
    const events = [];
    for await (const event of stream!) events.push(event);
    assert.deepEqual(events, [{ kind: "text", data: { delta: "hi" } }]);
  });

  it("lets the highest-precedence plugin with either hook decide", async () => {
    const runtime = new HookRuntime();
    runtime.register({ runModel: () => "low" }, "low");
    runtime.register({ runModelStream: () => AsyncStreamEvents.of([{ kind: "text", data: { delta: "high" } }]) }, "high");
    assert.equal(await text(runtime), "high");
  });

  it("answers nothing when the deciding hook returns nothing, in both directions", async () => {
    const streamOnly = new HookRuntime();
    streamOnly.register({ runModelStream: () => null }, "s");
    assert.equal(await text(streamOnly), undefined);
    const textOnly = new HookRuntime();
    textOnly.register({ runModel: () => undefined }, "t");
    assert.equal(await text(textOnly), undefined);
    assert.equal(await text(new HookRuntime()), undefined);
  });

  it("rejects wrong return types with a TypeError", async () => {
    const runtime = new HookRuntime();
    runtime.register({ runModel: (() => 42) as unknown as BubPlugin["runModel"] }, "bad");
    await assert.rejects(async () => runtime.call("runModelStream", modelArgs), { name: "TypeError", message: "hook.runModel must return string or null" });
    const streams = new HookRuntime();
    streams.register({ runModelStream: (() => "text") as unknown as BubPlugin["runModelStream"] }, "bad");
    await assert.rejects(streams.call("runModelStream", modelArgs), { name: "TypeError", message: "hook.runModelStream must return AsyncStreamEvents or null" });
  });
});
