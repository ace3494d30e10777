import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import { z } from "zod";
import { AgentHooks } from "../../src/agent/interceptors.ts";
import { BubError } from "../../src/kernel/errors.ts";
import type { BubPlugin } from "../../src/kernel/hooks.ts";
import { finish, replace, type LlmCallRequest, type LlmCallResult } from "../../src/kernel/interception.ts";
import { HookRuntime } from "../../src/kernel/runtime.ts";
import type { StreamEvent } from "../../src/kernel/stream.ts";
import type { TurnState } from "../../src/kernel/types.ts";
import { createModelClient } from "../../src/llm/model-client.ts";
import { runModelStep, type ModelStepOptions } from "../../src/llm/model-step.ts";
import { defaultModelSettings, type ModelSettings } from "../../src/llm/settings.ts";
import { stepRecordEntries, type StepRecord } from "../../src/llm/step-record.ts";
import { defineTool, type ToolContext } from "../../src/tools/tool.ts";
import { reply } from "../support/fake-openai.ts";
import { useFakeOpenAI } from "../support/fake-openai-suite.ts";

describe("runModelStep (against a fake OpenAI server)", () => {
  const server = useFakeOpenAI();

  function settingsFor(overrides: Partial<ModelSettings> = {}): ModelSettings {
    return defaultModelSettings({ model: "fake:model-a", api_base: server.url, api_key: "sk-test", max_tokens: 1000, ...overrides });
  }

  /** Interception hooks over a real HookRuntime; later plugins run first. */
  function hooksWith(...plugins: BubPlugin[]): AgentHooks {
    const runtime = new HookRuntime();
    plugins.forEach((plugin, index) => runtime.register(plugin, plugin.name ?? `plugin-${index}`));
    return new AgentHooks(runtime);
  }

  /** Records every afterLlmCall. */
  function llmObserver(calls: { request: LlmCallRequest; result: LlmCallResult }[]): BubPlugin {
    return { name: "observer", afterLlmCall: ({ request, result }) => void calls.push({ request, result }) };
  }

  interface Harness {
    records: StepRecord[];
    options(overrides?: Partial<ModelStepOptions<string>>): ModelStepOptions<string>;
  }

  function harness(settings: Partial<ModelSettings> = {}): Harness {
    const records: StepRecord[] = [];
    const client = createModelClient(settingsFor(settings), { env: {}, sleep: async () => undefined, retry: { maxAttempts: 1 } });
    let runs = 0;
    return {
      records,
      options: (overrides = {}) => ({
        client,
        model: "fake:model-a",
        systemPrompt: "You are Bub.",
        history: [
          { role: "user", content: "earlier question" },
          { role: "assistant", content: "earlier answer" },
        ],
        prompt: "what now?",
        state: {},
        tape: "tape:session",
        record: (record) => void records.push(record),
        runId: () => `run-test-${++runs}`,
        ...overrides,
      }),
    };
  }

  async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
    const events: StreamEvent[] = [];
    for await (const event of stream) events.push(event);
    return events;
  }

  const kinds = (events: StreamEvent[]) => events.map((event) => event.kind);

  describe("runModelStep: answers", () => {
    it("streams reasoning and text, then usage and final; records the answer", async () => {
      server.script(reply.text("All good.", { reasoning: "check", usage: { prompt_tokens: 30, completion_tokens: 3 } }));
      const llmCalls: { request: LlmCallRequest; result: LlmCallResult }[] = [];
      const h = harness();
      const step = runModelStep(h.options({ hooks: hooksWith(llmObserver(llmCalls)), steering: ["also this"] }));
      const events = await collect(step);
      assert.deepEqual(kinds(events), ["reasoning", "text", "text", "usage", "final"]);
      assert.deepEqual(events.at(-1), { kind: "final", data: { ok: true, text: "All good." } });
      assert.deepEqual(events.at(-2), { kind: "usage", data: { prompt_tokens: 30, completion_tokens: 3, total_tokens: 33 } });

      assert.deepEqual(server.requests[0]!.body.messages, [
        { role: "system", content: "You are Bub." },
        { role: "user", content: "earlier question" },
        { role: "assistant", content: "earlier answer" },
        { role: "user", content: "also this" },
        { role: "user", content: "what now?" },
      ]);
      assert.equal(server.requests[0]!.body.max_tokens, 1000);

      assert.equal(h.records.length, 1);
      assert.deepEqual(h.records[0], {
        runId: "run-test-1",
        systemPrompt: "You are Bub.",
        contextError: null,
        newMessages: [
          { role: "user", content: "also this" },
          { role: "user", content: "what now?" },
        ],
        toolCalls: null,
        toolResults: null,
        error: null,
        responseText: "All good.",
        usage: { prompt_tokens: 30, completion_tokens: 3, total_tokens: 33 },
        provider: "fake",
        model: "fake:model-a",
      });
      assert.deepEqual(stepRecordEntries(h.records[0]!).map((entry) => [entry.kind, entry.payload.role ?? entry.payload.name ?? null]), [
        ["system", null],
        ["message", "user"],
        ["message", "user"],
        ["message", "assistant"],
        ["event", "run"],
      ]);

      assert.equal(llmCalls.length, 1, "afterLlmCall fires exactly once");
      assert.equal(llmCalls[0]!.result.text, "All good.");
      assert.equal(llmCalls[0]!.result.error, null);
      assert.deepEqual(llmCalls[0]!.result.usage, { prompt_tokens: 30, completion_tokens: 3, total_tokens: 33 });
      assert.equal(llmCalls[0]!.request.runId, "run-test-1");
      assert.equal(step.outcome?.status, "ok");
      assert.equal(step.outcome?.text, "All good.");
      assert.deepEqual(step.usage, { prompt_tokens: 30, completion_tokens: 3, total_tokens: 33 });
    });

    it("reads the history lazily and sends the session's reasoning effort", async () => {
      server.script(reply.text("ok"));
      const h = harness();
      let reads = 0;
      const state: TurnState = { reasoning_effort: "minimal" };
      await collect(runModelStep(h.options({ state, systemPrompt: "", history: async () => (reads++, [{ role: "user", content: "from tape" }]) })));
      assert.equal(reads, 1);
      assert.deepEqual(server.requests[0]!.body.messages, [
        { role: "user", content: "from tape" },
        { role: "user", content: "what now?" },
      ]);
      assert.equal(server.requests[0]!.body.reasoning_effort, "minimal");
      assert.equal(h.records[0]!.systemPrompt, null);
    });

    it("sends a multimodal prompt as content parts", async () => {
      server.script(reply.text("a cat"));
      const h = harness();
      const prompt = [
        { type: "text", text: "what is it?" },
        { type: "image_url", image_url: { url: "data:image/jpeg;base64,/9j/4AAQ" } },
      ];
      await collect(runModelStep(h.options({ prompt, history: [] })));
      assert.deepEqual(server.requests[0]!.body.messages.at(-1), {
        role: "user",
        content: [
          { type: "text", text: "what is it?" },
          { type: "image_url", image_url: { url: "data:image/jpeg;base64,/9j/4AAQ" } },
        ],
      });
      assert.deepEqual(h.records[0]!.newMessages, [{ role: "user", content: prompt }]);
    });
  });

  describe("runModelStep: interception", () => {
    it("beforeLlmCall finish ends the step without calling the model or afterLlmCall", async () => {
      const llmCalls: unknown[] = [];
      const h = harness();
      const hooks = hooksWith(llmObserver(llmCalls as never), { name: "cache", beforeLlmCall: () => finish("cached answer") });
      const step = runModelStep(h.options({ hooks }));
      const events = await collect(step);
      assert.deepEqual(events, [
        { kind: "text", data: { delta: "cached answer" } },
        { kind: "final", data: { ok: true, text: "cached answer" } },
      ]);
      assert.equal(server.requests.length, 0);
      assert.equal(llmCalls.length, 0);
      assert.equal(h.records[0]!.responseText, "cached answer");
      assert.equal(h.records[0]!.model, "fake:model-a");
      assert.equal(step.outcome?.status, "finished");
    });

    it("a request returned by beforeLlmCall is what gets sent", async () => {
      server.script(reply.text("ok"));
      const h = harness();
      const hooks = hooksWith({
        beforeLlmCall: ({ request }) => ({ ...request, model: "fake:model-b", maxTokens: 42, messages: [...request.messages, { role: "user", content: "(be brief)" }] }),
      });
      await collect(runModelStep(h.options({ hooks })));
      const body = server.requests[0]!.body;
      assert.equal(body.model, "model-b");
      assert.equal(body.max_tokens, 42);
      assert.deepEqual(body.messages.at(-1), { role: "user", content: "(be brief)" });
      assert.equal(h.records[0]!.model, "fake:model-b");
    });

    it("afterLlmCall fires once with the error when the call fails", async () => {
      server.script(reply.error(401, "Incorrect API key"));
      const llmCalls: { request: LlmCallRequest; result: LlmCallResult }[] = [];
      const h = harness();
      const step = runModelStep(h.options({ hooks: hooksWith(llmObserver(llmCalls)) }));
      const events = await collect(step);
      assert.deepEqual(kinds(events), ["error", "final"]);
      assert.equal((events[0] as { data: { kind: string } }).data.kind, "config");
      assert.deepEqual(events[1], { kind: "final", data: { ok: false } });
      assert.equal(llmCalls.length, 1);
      assert.ok(BubError.isInstance(llmCalls[0]!.result.error));
      assert.equal(step.outcome?.status, "error");
      assert.equal(step.error?.kind, "config");
      assert.deepEqual(stepRecordEntries(h.records[0]!).map((entry) => entry.kind), ["system", "message", "error", "event"]);
      assert.deepEqual(stepRecordEntries(h.records[0]!).at(-1)!.payload, { name: "run", data: { status: "error", provider: "fake", model: "fake:model-a" } });
    });

    it("afterLlmCall does not fire when the consumer stops early, and nothing is recorded", async () => {
      server.script(reply.text(Array.from({ length: 40 }, (_, i) => `w${i} `)));
      const llmCalls: unknown[] = [];
      const h = harness();
      for await (const event of runModelStep(h.options({ hooks: hooksWith(llmObserver(llmCalls as never)) }))) {
        assert.equal(event.kind, "text");
        break;
      }
      assert.equal(llmCalls.length, 0);
      assert.equal(h.records.length, 0);
    });

    it("cancellation rejects, without afterLlmCall or a record", async () => {
      server.script(reply.hang());
      const controller = new AbortController();
      const llmCalls: unknown[] = [];
      const h = harness();
      const pending = collect(runModelStep(h.options({ hooks: hooksWith(llmObserver(llmCalls as never)), signal: controller.signal })));
      await server.waitForRequest(0);
      controller.abort(new Error("cancelled by user"));
      await assert.rejects(pending, { message: "cancelled by user" });
      assert.equal(llmCalls.length, 0);
      assert.equal(h.records.length, 0);
    });
  });

  describe("runModelStep: failures", () => {
    it("flags a context-length failure for auto-handoff", async () => {
      server.script(reply.contextLength(4096));
      const h = harness();
      const step = runModelStep(h.options());
      const events = await collect(step);
      assert.equal(step.outcome?.contextLengthExceeded, true);
      assert.match((events[0] as { data: { message: string } }).data.message, /maximum context length is 4096/);
    });

    it("records a context error when reading the history fails, without calling the model", async () => {
      const h = harness();
      const step = runModelStep(
        h.options({
          history: () => {
            throw new BubError("not_found", "No anchors found in tape.");
          },
        }),
      );
      const events = await collect(step);
      assert.deepEqual(events, [
        { kind: "error", data: { kind: "not_found", message: "No anchors found in tape." } },
        { kind: "final", data: { ok: false } },
      ]);
      assert.equal(server.requests.length, 0);
      assert.deepEqual(stepRecordEntries(h.records[0]!).map((entry) => entry.kind), ["system", "error", "event"]);
      assert.equal(h.records[0]!.contextError, h.records[0]!.error);
    });

    it("lets other errors from the history reader propagate", async () => {
      const h = harness();
      const step = runModelStep(
        h.options({
          history: () => {
            throw new TypeError("bug");
          },
        }),
      );
      await assert.rejects(collect(step), TypeError);
      assert.equal(h.records.length, 0);
    });
  });

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
      assert.equal(state._runtime_tape, "tape:session");

      const record = h.records[0]!;
      assert.equal(record.responseText, null, "text written alongside tool calls is not recorded as an answer");
      assert.deepEqual(record.toolCalls, toolCalls);
      assert.deepEqual(record.toolResults, ["contents of README.md", "hi"]);
      assert.deepEqual(stepRecordEntries(record).map((entry) => entry.kind), ["system", "message", "tool_call", "tool_result", "event"]);
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

  describe("stepRecordEntries", () => {
    it("orders a full record like the reference: system, context error, messages, tool_call, tool_result, error, answer, run", () => {
      const contextError = new BubError("not_found", "no anchor");
      const error = new BubError("provider", "refused");
      const entries = stepRecordEntries({
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
