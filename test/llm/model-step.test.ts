import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BubError } from "../../src/kernel/errors.ts";
import { finish, type LlmCallRequest, type LlmCallResult } from "../../src/kernel/interception.ts";
import type { TurnState } from "../../src/kernel/types.ts";
import { runModelStep } from "../../src/llm/model-step.ts";
import { chatRecordEntries } from "../../src/tape/tape.ts";
import { reply } from "../support/fake-openai.ts";
import { useFakeOpenAI } from "../support/fake-openai-suite.ts";
import { modelStepHarness } from "./model-step-support.ts";

describe("runModelStep (against a fake OpenAI server)", () => {
  const server = useFakeOpenAI();
  const { hooksWith, llmObserver, harness, collect, kinds } = modelStepHarness(server);

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
      const { elapsedMs, ...recorded } = h.records[0]!;
      assert.ok(typeof elapsedMs === "number" && elapsedMs >= 0, "the model call's wall time is recorded");
      assert.equal((chatRecordEntries(h.records[0]!).at(-1)!.payload.data as Record<string, unknown>).elapsed_ms, elapsedMs, "and put on the run event");
      assert.deepEqual(recorded, {
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
      assert.deepEqual(chatRecordEntries(h.records[0]!).map((entry) => [entry.kind, entry.payload.role ?? entry.payload.name ?? null]), [
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
      assert.deepEqual(chatRecordEntries(h.records[0]!).map((entry) => entry.kind), ["system", "message", "error", "event"]);
      const run = chatRecordEntries(h.records[0]!).at(-1)!.payload;
      const elapsed = (run.data as Record<string, unknown>).elapsed_ms;
      assert.equal(typeof elapsed, "number", "a failed call's wall time too");
      assert.deepEqual(run, { name: "run", data: { status: "error", provider: "fake", model: "fake:model-a", elapsed_ms: elapsed } });
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
      assert.deepEqual(chatRecordEntries(h.records[0]!).map((entry) => entry.kind), ["system", "error", "event"]);
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
});
