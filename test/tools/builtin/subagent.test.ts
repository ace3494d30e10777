// The subagent tool against a hand-written runtime agent: session modes, tool restriction
// (never subagent itself), unknown names, and how the stream becomes the result.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { z } from "zod";
import { subagentTools } from "../../../src/tools/builtin/subagent.ts";
import { defineTool } from "../../../src/tools/tool.ts";
import { call, errorOf, fakeAgent, toolContext } from "../support/tool-context.ts";

const tools = subagentTools();
const echo = (name: string) => defineTool({ name, parameters: z.object({}), run: () => name });
const registryTools = () => [echo("fs.read"), echo("bash"), ...tools];

describe("subagent tool", () => {
  it("runs on a fresh temp session by default, with every tool but itself", async () => {
    const agent = fakeAgent({ tools: registryTools() });
    const state = { session_id: "cli:local", model: "x:y" };
    assert.equal(await call(tools, "subagent", { prompt: "do it" }, toolContext(state, { agent })), "done");
    const [run] = agent.runs;
    assert.match(run!.sessionId, /^temp\/[0-9a-f]{8}$/);
    assert.equal(run!.state.session_id, run!.sessionId);
    assert.equal(run!.state.model, "x:y", "the state is a copy of the caller's");
    assert.equal(state.session_id, "cli:local", "the caller's state is untouched");
    assert.deepEqual([...run!.options!.allowedTools!].sort(), ["bash", "fs.read"]);
    assert.equal(run!.options!.allowedSkills, null);
    assert.equal(run!.prompt, "do it");
  });

  it("inherits the current session or uses a named one", async () => {
    const agent = fakeAgent({ tools: registryTools() });
    await call(tools, "subagent", { prompt: "a", session: "inherit" }, toolContext({ session_id: "tg:1" }, { agent: agent }));
    await call(tools, "subagent", { prompt: "a", session: "inherit" }, toolContext({}, { agent: agent }));
    await call(tools, "subagent", { prompt: "a", session: "research" }, toolContext({ session_id: "tg:1" }, { agent: agent }));
    assert.deepEqual(agent.runs.map((run) => run.sessionId), ["tg:1", "temp/unknown", "research"]);
  });

  it("resolves allowed tools by alias, drops subagent, and passes model and skills on", async () => {
    const agent = fakeAgent({ tools: registryTools() });
    await call(
      tools,
      "subagent",
      { prompt: [{ type: "text", text: "hi" }], model: "openai:gpt-4o", allowed_tools: ["FS_READ", "subagent"], allowed_skills: ["telegram"] },
      toolContext({}, { agent: agent }),
    );
    const options = agent.runs[0]!.options!;
    assert.deepEqual(options.allowedTools, ["fs.read"]);
    assert.deepEqual(options.allowedSkills, ["telegram"]);
    assert.equal(options.model, "openai:gpt-4o");
    assert.deepEqual(agent.runs[0]!.prompt, [{ type: "text", text: "hi" }]);
  });

  it("refuses unknown tool names before running anything", async () => {
    const agent = fakeAgent({ tools: registryTools() });
    assert.equal(await errorOf(call(tools, "subagent", { prompt: "x", allowed_tools: ["nope", "bash"] }, toolContext({}, { agent: agent }))), "unknown tool name(s): 'nope'");
    assert.equal(agent.runs.length, 0);
  });

  it("joins text deltas and marks error events", async () => {
    const agent = fakeAgent({
      tools: registryTools(),
      events: [
        { kind: "text", data: { delta: "part one, " } },
        { kind: "tool_call", data: { tool_calls: [] } },
        { kind: "error", data: { kind: "provider", message: "rate limited" } },
        { kind: "text", data: { delta: "part two" } },
        { kind: "final", data: { ok: true, text: "ignored" } },
      ],
    });
    assert.equal(await call(tools, "subagent", { prompt: "x" }, toolContext({}, { agent: agent })), "part one, [Error: rate limited]part two");
  });

  it("needs a runtime agent", async () => {
    assert.equal(await errorOf(call(tools, "subagent", { prompt: "x" }, toolContext({}))), "no runtime agent found in tool context");
  });
});
