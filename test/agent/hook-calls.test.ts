import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { continuePromptOf, systemPromptOf, tapeContextOf, tapeSidecarsOf } from "../../src/agent/hook-calls.ts";
import { providedChannels } from "../../src/channels/selection.ts";
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
    assert.equal(systemPromptOf(runtime, "", {}), "base\n\nextra");
  });

  it("dedupes channels and sidecars by name, highest precedence wins", () => {
    const channel = (name: string, tag: string) => ({ name, tag, start: async () => {}, stop: async () => {}, send: async () => {} });
    const runtime = runtimeWith(
      { name: "low", provideChannels: () => [channel("telegram", "low"), channel("cli", "low")], provideTapeSidecar: () => ({ name: "spill", tag: "low" }) as never },
      { name: "high", provideChannels: () => [channel("telegram", "high")], provideTapeSidecar: () => ({ name: "spill", tag: "high" }) as never },
    );
    const channels = providedChannels(runtime, async () => {});
    assert.deepEqual([...channels.keys()], ["telegram", "cli"]);
    assert.equal((channels.get("telegram") as unknown as { tag: string }).tag, "high");
    assert.deepEqual(tapeSidecarsOf(runtime).map((s) => (s as unknown as { tag: string }).tag), ["high"]);
  });

  it("type-checks continuePrompt, buildTapeContext and provideModelOptions answers", async () => {
    const good = runtimeWith({
      name: "good",
      continuePrompt: () => "go on",
      buildTapeContext: () => ({ anchor: LAST_ANCHOR, state: {} }),
      provideModelOptions: () => ({ models: [{ id: "a:b" }], currentModel: "a:b" }),
    });
    const tape = createTape({ name: "t", store: createMemoryTapeStore(), context: { anchor: null, state: {} }, archivePath: "/nonexistent" });
    assert.equal(await continuePromptOf(good, "p", tape, { error: null, usage: null }, testTurnContext()), "go on");
    assert.equal(tapeContextOf(good).anchor, LAST_ANCHOR);
    assert.deepEqual(await frameworkWith({ name: "good", provideModelOptions: () => ({ models: [{ id: "a:b" }], currentModel: "a:b" }) }).modelOptions("s"), { models: [{ id: "a:b" }], currentModel: "a:b" });
    const bad = runtimeWith({ name: "bad", buildTapeContext: () => ({}) as never, provideModelOptions: () => "x" as never });
    await assert.rejects(continuePromptOf(bad, "p", tape, { error: null, usage: null }, testTurnContext()), { message: "hook.continuePrompt must return string" });
    assert.throws(() => tapeContextOf(bad), { message: "hook.buildTapeContext must return TapeContext" });
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
