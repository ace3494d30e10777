/**
 * The typed turn state: a plugin declares its keys by merging into `TurnState` (declaration
 * merging, as a plugin does with `declare module "bub-ts"`), an undeclared key does not
 * compile (checked by `npm run typecheck`: each `@ts-expect-error` below fails the build if
 * the state took any key again), and at run time the `loadState` answers are merged as in the
 * reference: any plain object, minus what is checked out once at the merge (non-objects, the
 * read-only `_runtime_*` keys, a wrong type for one of bub's own keys), each with a warning.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { definePlugin, type BubPlugin, type TurnState } from "../../src/index.ts";
import { createTurnContext, createTurnState, mergeLoadedStates } from "../../src/kernel/turn-context.ts";
import { captureLogs } from "../support/temp.ts";
import { kernelFramework, testTurnContext } from "../support/framework.ts";

// A plugin writes `declare module "bub-ts"` (test/e2e/plugin-scaffold.e2e.ts does, on the
// installed package). In this program every augmentation names the declaring module: with
// TypeScript 7.0, one through the re-exporting entry made later ones on the declaring module vanish.
declare module "../../src/kernel/types.ts" {
  interface TurnState {
    /** Declared by the "acme" plugin below. */
    "acme.visits"?: number;
  }
}

const acme = definePlugin({
  name: "acme",
  loadState: ({ sessionId }) => ({ "acme.visits": sessionId.length }),
  buildPrompt: ({ message, state }) => {
    const visits: number | undefined = state["acme.visits"];
    return `${message.content} (${String(visits)})`;
  },
});

/** Compiled, never called. */
export function typeChecks(state: TurnState): void {
  // @ts-expect-error a key nobody declared is not part of the state's type
  void state["acme.undeclared"];
  // @ts-expect-error nor is one without a dot
  void state.undeclaredKey;
  // @ts-expect-error the compatibility keys are read-only
  state._runtime_workspace = "/elsewhere";
}

// @ts-expect-error a loadState answer made only of undeclared keys does not compile
const undeclared: BubPlugin = { loadState: () => ({ "acme.undeclared": 1 }) };
void undeclared;

function framework(...plugins: BubPlugin[]) {
  const bub = kernelFramework();
  for (const plugin of plugins) bub.runtime.register(plugin, plugin.name ?? "anonymous");
  bub.runtime.register({ name: "model", runModel: ({ prompt }) => `echo:${String(prompt)}` }, "model");
  return bub;
}

describe("the typed turn state", () => {
  it("carries a plugin's declared key from its loadState to its other hooks", async () => {
    const bub = framework(acme);
    const { state, modelOutput } = await bub.processInbound({ content: "hi", session_id: "tg:1234" });
    assert.equal(state["acme.visits"], 7);
    assert.equal(modelOutput, "echo:hi (7)");
  });

  it("merges a JavaScript plugin's plain object whatever its keys, as the reference does", async () => {
    const answer: unknown = { "legacy.flag": true, nested: { a: 1 } };
    const bub = framework({ name: "legacy", loadState: () => answer as never });
    const { state } = await bub.processInbound({ content: "x" });
    assert.deepEqual({ ...state, turn_id: "t" }, { turn_id: "t", "legacy.flag": true, nested: { a: 1 } });
  });

  it("leaves out a loadState answer that is not an object, with a warning naming the plugin", async () => {
    const bub = framework({ name: "low", loadState: () => ({ session_id: "kept" }) }, { name: "odd", loadState: () => "not a state" as never }, { name: "list", loadState: () => [1] as never });
    const { result, logs } = await captureLogs(() => bub.processInbound({ content: "x" }));
    assert.equal(result.state.session_id, "kept");
    assert.equal(result.modelOutput, "echo:x");
    const warnings = logs.filter((log) => log.level === "warn").map((log) => log.message);
    assert.deepEqual(warnings.sort(), ["hook.load_state_not_an_object adapter=list", "hook.load_state_not_an_object adapter=odd"]);
  });

  it("skips a _runtime_* key of a loadState answer (read-only) with one warning naming the plugin, and merges the rest", async () => {
    const legacy = { name: "legacy", loadState: () => ({ _runtime_thread_id: "legacy-thread", _runtime_workspace: "/elsewhere", note: "kept" }) as never };
    const bub = framework(legacy);
    const { result, logs } = await captureLogs(() => bub.processInbound({ content: "x", context: { thread_id: "real" } }));
    const { state, context } = result;
    assert.equal(state._runtime_thread_id, "real", "still the context's thread");
    assert.equal(state._runtime_workspace, "/tmp");
    assert.equal(context.threadId, "real");
    assert.deepEqual(Object.keys(state).sort(), ["note", "turn_id"]);
    assert.deepEqual(logs.filter((log) => log.level === "warn").map((log) => log.message), ["hook.load_state_keys_skipped keys=_runtime_thread_id,_runtime_workspace adapter=legacy"]);
  });

  it("skips a wrong type for one of bub's own keys, and lets null clear a lower plugin's value", async () => {
    const bub = framework(
      { name: "low", loadState: () => ({ model: "openai:low", user: "u1", reasoning_effort: "high" }) },
      { name: "bad", loadState: () => ({ model: 42, allowed_skills: ["a", 2], retried_after_restart: "yes", user: null }) as never },
    );
    const { result, logs } = await captureLogs(() => bub.processInbound({ content: "x" }));
    assert.equal(result.state.model, "openai:low");
    assert.equal(result.state.user, undefined);
    assert.equal(result.state.reasoning_effort, "high");
    assert.equal(result.state.allowed_skills, undefined);
    assert.equal(result.state.retried_after_restart, undefined);
    assert.deepEqual(logs.filter((log) => log.level === "warn").map((log) => log.message), ["hook.load_state_keys_skipped keys=model,allowed_skills,retried_after_restart adapter=bad"]);
  });

  it("merges lowest precedence first (answers come highest first, each with its plugin), symbol keys too", () => {
    const secret = Symbol("secret");
    const merged = mergeLoadedStates([{ shared: "high" }, null, { shared: "low", low: 1, [secret]: "kept" }], ["high", "none", "low"]);
    assert.deepEqual(merged, { shared: "high", low: 1, [secret]: "kept" });
  });
});

describe("the _runtime_* compatibility view", () => {
  it("reads the context, is not enumerable, and cannot be assigned: strict code gets a TypeError", () => {
    const context = createTurnContext({ ...testTurnContext(), threadId: "t1" });
    const state: TurnState = createTurnState(context, { turn_id: "turn" });
    assert.equal(state._runtime_thread_id, "t1");
    assert.equal(state._runtime_workspace, context.workspace);
    assert.equal(state._runtime_agent, undefined);
    const agent = {};
    context.agent = agent;
    assert.equal(state._runtime_agent, agent, "follows the context");
    assert.deepEqual(Object.keys(state), ["turn_id"]);
    assert.throws(() => Object.assign(state, { _runtime_agent: {} }), TypeError);
    assert.equal(Reflect.set(state, "_runtime_thread_id", "other"), false);
    assert.equal(state._runtime_agent, agent);
    assert.equal(state._runtime_thread_id, "t1");
    assert.equal(Object.hasOwn(state, "_runtime_agent"), false);
  });
});
