// The contract as a plugin author compiles against it (npm test runs tsc first): every
// expect-error line below must really be an error, or tsc fails with "unused directive".
// The test runs the same plugin to show that what does compile also works.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { z } from "zod";
import { definePlugin, toEnvelope, type BubPlugin, type Envelope, type TurnContext } from "../../src/index.ts";
import { defineTool, type ToolContext } from "../../src/tools/tool.ts";
import { kernelFramework } from "../support/framework.ts";

const seen: { content: string; priority: unknown; workspace: string; aborted: boolean }[] = [];

const typed = definePlugin({
  name: "typed",
  buildPrompt: ({ message, context }) => {
    // A plugin's own envelope field is read with brackets.
    seen.push({ content: message.content, priority: message["acme.priority"], workspace: context.workspace, aborted: context.signal.aborted });
    return message.content.toUpperCase();
  },
  runModel: ({ prompt }) => `echo ${String(prompt)}`,
});

function misspeltField(message: Envelope): string {
  // @ts-expect-error a misspelt envelope field does not compile (`content` is the field)
  return String(message.contnet);
}

function misspeltContext(context: TurnContext): string {
  // @ts-expect-error the turn context has no `workspaceDir`
  return context.workspaceDir;
}

// @ts-expect-error runModel answers with text, not a number
const wrongModel: BubPlugin = { runModel: () => 42 };
// @ts-expect-error loadState answers with a partial state object, not a string
const wrongState: BubPlugin = { loadState: () => "state" };
// @ts-expect-error renderOutbound answers with envelopes that have content
const wrongOutbound: BubPlugin = { renderOutbound: () => ({ chatId: "1" }) };

const note = defineTool({
  name: "acme.note",
  parameters: z.object({ text: z.string() }),
  context: true,
  run: ({ text }, context) => `${text} in ${context.turn?.workspace ?? "?"}`,
});

function callWithoutContext(): unknown {
  // @ts-expect-error a context tool is called with its context
  return note.run({ text: "x" });
}

function contextWithoutSignal(base: Omit<ToolContext, "signal">): unknown {
  // @ts-expect-error a tool context always carries the turn's signal
  const context: ToolContext = { ...base };
  return context;
}

describe("the plugin contract as plugins compile against it", () => {
  it("runs a typed plugin: typed envelope fields, bracketed extensions, the turn context", async () => {
    const framework = kernelFramework({ workspace: "/srv/agent" });
    await framework.registerPlugin(typed);
    const result = await framework.processInbound(toEnvelope({ channel: "test", chat_id: "1", content: "hi", "acme.priority": "high" }));
    assert.equal(result.modelOutput, "echo HI");
    assert.deepEqual(seen, [{ content: "hi", priority: "high", workspace: "/srv/agent", aborted: false }]);
    assert.equal(misspeltField(toEnvelope("x")), "undefined");
    assert.ok([misspeltContext, wrongModel, wrongState, wrongOutbound, callWithoutContext, contextWithoutSignal].every(Boolean));
  });
});
