// Type-level contract tests: this file must type-check (npm test runs tsc first), and each
// expect-error line below must really be an error, or tsc fails with "unused directive".
import { it } from "node:test";
import assert from "node:assert/strict";
import { definePlugin, type BubHooks, type BubPlugin, type HookName } from "../../src/kernel/hooks.ts";
import { HOOK_TABLE, type HookSpec } from "../../src/kernel/hook-table.ts";
import { AsyncStreamEvents } from "../../src/kernel/stream.ts";

const typed = definePlugin({
  name: "typed",
  buildPrompt: ({ message, sessionId, state }) => `${String(message)}${sessionId}${String(state.session_id)}`,
  runModelStream: async () => AsyncStreamEvents.of([{ kind: "text", data: { delta: "x" } }]),
  systemPrompt: () => "fragment",
  registerCliCommands: ({ app }) => {
    app.command("noop");
    return undefined;
  },
  provideTapeStore: function* () {
    yield { listTapes: async () => [], fetchAll: async () => [], append: async (_tape, entry) => ({ ...entry, id: 1 }), reset: async () => {} };
  },
});

// @ts-expect-error systemPrompt is sync-only: a Promise answer does not type-check
const asyncSystemPrompt: BubPlugin = { systemPrompt: async () => "x" };
// @ts-expect-error provideChannels is sync-only
const asyncChannels: BubPlugin = { provideChannels: async () => [] };
// @ts-expect-error registerCliCommands is sync-only
const asyncCommands: BubPlugin = { registerCliCommands: async () => undefined };
// @ts-expect-error runModel must answer with a string
const wrongModel: BubPlugin = { runModel: () => 42 };
// @ts-expect-error a misspelt hook name is an error in definePlugin
const misspelt = definePlugin({ buildPromt: () => "x" });

// The hook table cannot drift from the interface: a hook left out of the table is an error.
const complete: { [K in HookName]: HookSpec<K> } = HOOK_TABLE;
const { admitMessage: _left, ...withoutAdmit } = HOOK_TABLE;
// @ts-expect-error a table without `admitMessage` does not declare every hook
const incomplete: { [K in keyof BubHooks]: HookSpec<K> } = withoutAdmit;

it("keeps the inferred plugin usable as a BubPlugin", () => {
  const plugin: BubPlugin = typed;
  assert.equal(plugin.name, "typed");
  assert.ok([asyncSystemPrompt, asyncChannels, asyncCommands, wrongModel, misspelt, complete, incomplete].every(Boolean));
});
