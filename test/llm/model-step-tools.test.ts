import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import { z } from "zod";
import { BubError } from "../../src/kernel/errors.ts";
import { replace } from "../../src/kernel/interception.ts";
import type { TurnState } from "../../src/kernel/types.ts";
import { runModelStep } from "../../src/llm/model-step.ts";
import { chatRecordEntries } from "../../src/tape/tape.ts";
import { defineTool, type ToolContext } from "../../src/tools/tool.ts";
import { reply } from "../support/fake-openai.ts";
import { useFakeOpenAI } from "../support/fake-openai-suite.ts";
import { modelStepHarness } from "./model-step-support.ts";

describe("runModelStep (against a fake OpenAI server)", () => {
  const server = useFakeOpenAI();
  const { hooksWith, harness, collect, kinds } = modelStepHarness(server);

  describe("runModelStep: tool calls", () => {
    let releaseRead!: () => void;
    const calls: string[] = [];
    const contexts: ToolContext<string>[] = [];
    const read = defineTool({
      name: "fs.read",
      description: "Read a file",
      parameters: z.object({ path: z.string() }),
      context: true,
      run: async ({ path }, ctx: ToolContext<string>) => {
        calls.push(`read:${path}`);
        contexts.push(ctx);
        await new Promise<void>((resolve) => (releaseRead = resolve)); // released by `echo`: proves concurrency
        return `contents of ${path}`;
      },
    });
    const echo = defineTool({
      name: "echo",
      parameters: z.object({ text: z.string() }),
      run: ({ text }) => {
        calls.push(`echo:${text}`);
        releaseRead();
        return text;
      },
    });
    const hidden = defineTool({ name: "help", agentUse: false, run: () => "help" });

    beforeEach(() => {
      calls.length = 0;
      contexts.length = 0;
    });

    it("offers agent-usable tools under model names, runs calls concurrently, results in order", { timeout: 10_000 }, async () => {
      server.script(
        reply.toolCalls(
          [
            { id: "c1", name: "fs_read", arguments: '{"path": "README.md"}' },
            { id: "c2", name: "echo", arguments: '{"text": "hi"}' },
          ],
          { text: "Checking.", usage: { prompt_tokens: 50, completion_tokens: 9 } },
        ),
      );
      const h = harness();
      const seenTools: string[] = [];
      const hooks = hooksWith({ beforeToolCall: ({ call }) => void seenTools.push(call.tool) });
      const state: TurnState = {};
      const step = runModelStep(h.options({ tools: [read, echo, hidden], hooks, state }));
      const events = await collect(step);

      assert.deepEqual(server.requests[0]!.body.tools?.map((tool) => tool.function.name), ["fs_read", "echo"]);
      assert.deepEqual(kinds(events), ["text", "usage", "tool_call", "tool_result", "final"]);
      const toolCalls = [
        { id: "c1", type: "function", function: { name: "fs_read", arguments: '{"path": "README.md"}' } },
        { id: "c2", type: "function", function: { name: "echo", arguments: '{"text": "hi"}' } },
      ];
      assert.deepEqual(events[2], { kind: "tool_call", data: { tool_calls: toolCalls } });
      assert.deepEqual(events[3], { kind: "tool_result", data: { tool_results: ["contents of README.md", "hi"] } });
      assert.deepEqual(events[4], { kind: "final", data: { ok: true, tool_calls: toolCalls, tool_results: ["contents of README.md", "hi"] } });
      assert.deepEqual(calls, ["read:README.md", "echo:hi"]);
      assert.deepEqual(seenTools.sort(), ["echo", "fs_read"]);
      assert.equal(contexts[0]!.tape, "tape:session");
      assert.equal(contexts[0]!.runId, "run-test-1");
      assert.equal(contexts[0]!.state, state);

      const record = h.records[0]!;
      assert.equal(record.responseText, null, "text written alongside tool calls is not recorded as an answer");
      assert.deepEqual(record.toolCalls, toolCalls);
      assert.deepEqual(record.toolResults, ["contents of README.md", "hi"]);
      assert.ok(record.toolElapsedMs?.length === 2 && record.toolElapsedMs.every((ms) => typeof ms === "number" && ms >= 0), "each tool call's wall time, in call order");
      assert.deepEqual((chatRecordEntries(record).at(-1)!.payload.data as Record<string, unknown>).tool_elapsed_ms, record.toolElapsedMs);
      assert.deepEqual(chatRecordEntries(record).map((entry) => entry.kind), ["system", "message", "tool_call", "tool_result", "event"]);
      assert.equal(chatRecordEntries(record)[2]!.payload.content, "Checking.", "the text said beside the calls stays on the tool_call entry");
      assert.equal(step.outcome?.text, "Checking.");
      assert.equal(step.outcome?.toolError, null);
    });

    it("turns malformed argument JSON into an invalid_input result and still runs the other calls", async () => {
      server.script(
        reply.toolCalls([
          { id: "c1", name: "echo", arguments: '{"text": "unterminated' },
          { id: "c2", name: "echo", arguments: '{"text": "fine"}' },
          { id: "c3", name: "echo", arguments: "[1, 2]" },
        ]),
      );
      const h = harness();
      const step = runModelStep(h.options({ tools: [echo] }));
      const events = await collect(step);
      const results = (events.find((event) => event.kind === "tool_result") as { data: { tool_results: unknown[] } }).data.tool_results;
      assert.equal(results[1], "fine");
      for (const index of [0, 2]) {
        const result = results[index] as { kind: string; message: string; details: { tool: string; arguments: string } };
        assert.equal(result.kind, "invalid_input");
        assert.match(result.message, /^Tool 'echo' call has malformed arguments: expected a JSON object/);
        assert.equal(result.details.tool, "echo");
      }
      assert.equal((results[0] as { details: { arguments: string } }).details.arguments, '{"text": "unterminated');
      assert.deepEqual(calls, ["echo:fine"]);
      assert.equal(step.outcome?.toolError?.kind, "invalid_input");
      assert.equal(step.outcome?.status, "ok");
    });

    it("answers a call to an unknown tool with a tool error the model sees", async () => {
      server.script(reply.toolCalls([{ id: "c1", name: "fs_raed", arguments: '{"path": "a"}' }]));
      const h = harness();
      const events = await collect(runModelStep(h.options({ tools: [read] })));
      const results = (events.find((event) => event.kind === "tool_result") as { data: { tool_results: unknown[] } }).data.tool_results;
      assert.deepEqual(results, [{ kind: "tool", message: "Unknown tool name: fs_raed. Closest tool names: fs_read." }]);
      assert.deepEqual(h.records[0]!.toolResults, results);
    });

    it("lets a beforeToolCall hook recover an unknown tool call", async () => {
      server.script(reply.toolCalls([{ id: "c1", name: "fs_raed", arguments: "{}" }]));
      const h = harness();
      const hooks = hooksWith({ beforeToolCall: ({ call }) => (call.tool === "fs_raed" ? replace("Tool `fs_raed` does not exist. Did you mean fs_read?") : null) });
      const events = await collect(runModelStep(h.options({ tools: [read], hooks })));
      const results = (events.find((event) => event.kind === "tool_result") as { data: { tool_results: unknown[] } }).data.tool_results;
      assert.deepEqual(results, ["Tool `fs_raed` does not exist. Did you mean fs_read?"]);
    });

    it("does not offer tools a beforeLlmCall hook removed", async () => {
      server.script(reply.text("ok"));
      const h = harness();
      const hooks = hooksWith({ beforeLlmCall: ({ request }) => ({ ...request, toolNames: request.toolNames.filter((name) => name !== "fs_read") }) });
      await collect(runModelStep(h.options({ tools: [read, echo], hooks })));
      assert.deepEqual(server.requests[0]!.body.tools?.map((tool) => tool.function.name), ["echo"]);
    });
  });

  describe("chatRecordEntries", () => {
    it("orders a full record like the reference: system, context error, messages, tool_call, tool_result, error, answer, run", () => {
      const contextError = new BubError("not_found", "no anchor");
      const error = new BubError("provider", "refused");
      const entries = chatRecordEntries({
        runId: "run-1",
        systemPrompt: "sys",
        contextError,
        newMessages: [{ role: "user", content: "q" }],
        toolCalls: [{ id: "c", type: "function", function: { name: "t", arguments: "{}" } }],
        toolResults: ["r"],
        error,
        responseText: "a",
        usage: { total_tokens: 3 },
        provider: "fake",
        model: "fake:m",
      });
      assert.deepEqual(
        entries.map((entry) => entry.kind),
        ["system", "error", "message", "tool_call", "tool_result", "error", "message", "event"],
      );
      assert.ok(entries.every((entry) => entry.meta.run_id === "run-1"));
      assert.deepEqual(entries[3]!.payload, { calls: [{ id: "c", type: "function", function: { name: "t", arguments: "{}" } }] });
      assert.deepEqual(entries.at(-1)!.payload, { name: "run", data: { status: "error", usage: { total_tokens: 3 }, provider: "fake", model: "fake:m" } });
    });
  });
});
