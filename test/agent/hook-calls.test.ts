import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { HookRuntime } from "../../src/kernel/runtime.ts";
import { LAST_ANCHOR } from "../../src/kernel/tape-contract.ts";
import type { BubPlugin } from "../../src/kernel/hooks.ts";
import { createMemoryTapeStore, createTape } from "../../src/tape/index.ts";
import { kernelFramework, testTurnContext } from "../support/framework.ts";

/** A kernel framework with `plugins` registered, for the hook calls it makes itself. */
function frameworkWith(...plugins: BubPlugin[]) {
  const framework = kernelFramework();
  plugins.forEach((plugin, index) => framework.runtime.register(plugin, plugin.name ?? `p${index}`));
  return framework;
}

function runtimeWith(...plugins: BubPlugin[]): HookRuntime {
  const runtime = new HookRuntime();
  plugins.forEach((plugin, index) => runtime.register(plugin, plugin.name ?? `p${index}`));
  return runtime;
}

describe("the agent's hook calls", () => {
  it("joins system prompt fragments lowest precedence first, skipping empty ones", () => {
    const runtime = runtimeWith({ name: "a", systemPrompt: () => "base" }, { name: "b", systemPrompt: () => "" }, { name: "c", systemPrompt: () => "extra" });
    assert.equal(runtime.callSync("systemPrompt", { prompt: "", state: {} }), "base\n\nextra");
  });

  it("dedupes channels and sidecars by name, highest precedence wins", () => {
    const channel = (name: string, tag: string) => ({ name, tag, start: async () => {}, stop: async () => {}, send: async () => {} });
    const runtime = runtimeWith(
      { name: "low", provideChannels: () => [channel("telegram", "low"), channel("cli", "low")], provideTapeSidecar: () => ({ name: "spill", tag: "low" }) as never },
      { name: "high", provideChannels: () => [channel("telegram", "high")], provideTapeSidecar: () => ({ name: "spill", tag: "high" }) as never },
    );
    const channels = runtime.callSync("provideChannels", { messageHandler: async () => {} });
    assert.deepEqual([...channels.keys()], ["telegram", "cli"]);
    assert.equal((channels.get("telegram") as unknown as { tag: string }).tag, "high");
    assert.deepEqual(runtime.callSync("provideTapeSidecar", {}).map((s) => (s as unknown as { tag: string }).tag), ["high"]);
  });

  it("type-checks continuePrompt, buildTapeContext and provideModelOptions answers", async () => {
    const good = runtimeWith({
      name: "good",
      continuePrompt: () => "go on",
      buildTapeContext: () => ({ anchor: LAST_ANCHOR, state: {} }),
      provideModelOptions: () => ({ models: [{ id: "a:b" }], currentModel: "a:b" }),
    });
    const tape = createTape({ name: "t", store: createMemoryTapeStore(), context: { anchor: null, state: {} }, archivePath: "/nonexistent" });
    assert.equal(await good.call("continuePrompt", { prompt: "p", tape, state: { error: null, usage: null }, context: testTurnContext(), signal: testTurnContext().signal }), "go on");
    assert.equal(good.callSync("buildTapeContext", {}).anchor, LAST_ANCHOR);
    assert.deepEqual(await frameworkWith({ name: "good", provideModelOptions: () => ({ models: [{ id: "a:b" }], currentModel: "a:b" }) }).modelOptions("s"), { models: [{ id: "a:b" }], currentModel: "a:b" });
    const bad = runtimeWith({ name: "bad", buildTapeContext: () => ({}) as never, provideModelOptions: () => "x" as never });
    await assert.rejects(bad.call("continuePrompt", { prompt: "p", tape, state: { error: null, usage: null }, context: testTurnContext(), signal: testTurnContext().signal }), { message: "hook.continuePrompt must return string" });
    assert.throws(() => bad.callSync("buildTapeContext", {}), { message: "hook.buildTapeContext must return TapeContext" });
    await assert.rejects(frameworkWith({ name: "bad", provideModelOptions: () => "x" as never }).modelOptions("s"), TypeError);
  });

  it("merges model options: lists in precedence order, first current model", async () => {
    const framework = frameworkWith(
      { name: "low", provideModelOptions: () => ({ models: [{ id: "low" }], currentModel: "low" }) },
      { name: "high", provideModelOptions: () => ({ models: [{ id: "high" }] }) },
    );
    assert.deepEqual(await framework.modelOptions("s"), { models: [{ id: "high" }, { id: "low" }], currentModel: "low" });
  });
});
