import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isContextLengthError } from "../../src/llm/errors.ts";
import { createModelClient } from "../../src/llm/model-client.ts";
import { reply } from "../support/fake-openai.ts";
import { collect, failure, hello, useModelClientServer } from "./model-client-support.ts";

describe("model client (against a fake OpenAI server)", () => {
  const { server, settingsFor, clientFor } = useModelClientServer();

  describe("model call streaming", () => {
    it("streams reasoning and text deltas, then finish with usage in OpenAI field names", async () => {
      server.script(reply.text("Hi there, friend", { reasoning: "the user greets", usage: { prompt_tokens: 12, completion_tokens: 4, prompt_tokens_details: { cached_tokens: 8 } } }));
      const { client } = clientFor();
      const events = await collect(client.stream(hello));
      assert.deepEqual(events, [
        { type: "reasoning", delta: "the " },
        { type: "reasoning", delta: "user " },
        { type: "reasoning", delta: "greets" },
        { type: "text", delta: "Hi " },
        { type: "text", delta: "there, " },
        { type: "text", delta: "friend" },
        {
          type: "finish",
          finishReason: "stop",
          rawFinishReason: "stop",
          usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16, prompt_tokens_details: { cached_tokens: 8 } },
          model: "fake:model-a",
          provider: "fake",
        },
      ]);
    });

    it("sends the model id, messages, tools, max tokens and asks for streamed usage", async () => {
      server.script(reply.text("ok"));
      const { client } = clientFor({ max_tokens: 321 });
      await collect(
        client.stream({
          model: "fake:model-a",
          messages: [
            { role: "system", content: "You are Bub." },
            { role: "user", content: "read it" },
          ],
          tools: [{ name: "fs_read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }],
        }),
      );
      const request = server.requests[0]!;
      assert.equal(request.headers.authorization, "Bearer sk-test");
      assert.deepEqual(request.body, {
        model: "model-a",
        max_tokens: 321,
        messages: [
          { role: "system", content: "You are Bub." },
          { role: "user", content: "read it" },
        ],
        tools: [{ type: "function", function: { name: "fs_read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } } }],
        stream: true,
        stream_options: { include_usage: true },
      });
    });

    it("an explicit maxTokens wins over the settings", async () => {
      server.script(reply.text("ok"));
      await collect(clientFor({ max_tokens: 999 }).client.stream({ ...hello, maxTokens: 50 }));
      assert.equal(server.requests[0]!.body.max_tokens, 50);
    });

    it("delivers completed tool calls with the model's exact argument text, malformed or not", async () => {
      server.script(
        reply.toolCalls(
          [
            { id: "call_a", name: "fs_read", arguments: '{"path": "README.md",  "limit": 3}' },
            { id: "call_b", name: "bash", arguments: '{"cmd": "ls' },
          ],
          { text: "Let me look." },
        ),
      );
      const events = await collect(clientFor().client.stream(hello));
      assert.deepEqual(
        events.filter((event) => event.type === "tool_call"),
        [
          { type: "tool_call", call: { id: "call_a", type: "function", function: { name: "fs_read", arguments: '{"path": "README.md",  "limit": 3}' } } },
          { type: "tool_call", call: { id: "call_b", type: "function", function: { name: "bash", arguments: '{"cmd": "ls' } } },
        ],
      );
      const finish = events.at(-1)!;
      assert.equal(finish.type, "finish");
      assert.equal(finish.type === "finish" && finish.finishReason, "tool-calls");
    });

    it("converts multimodal user parts and tool history to the OpenAI wire format", async () => {
      server.script(reply.text("ok"));
      await collect(
        clientFor().client.stream({
          model: "fake:model-a",
          messages: [
            { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name: "fs_read", arguments: '{"path":"a"}' } }] },
            { role: "tool", content: "contents of a", tool_call_id: "c1", name: "fs_read" },
            {
              role: "user",
              content: [
                { type: "text", text: "what is this?" },
                { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
                { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } },
              ],
            },
          ],
        }),
      );
      assert.deepEqual(server.requests[0]!.body.messages, [
        { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name: "fs_read", arguments: '{"path":"a"}' } }] },
        { role: "tool", tool_call_id: "c1", content: "contents of a", name: "fs_read" },
        {
          role: "user",
          content: [
            { type: "text", text: "what is this?" },
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
            { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } },
          ],
        },
      ]);
    });

    it("maps completion_args to sampling settings and passes the rest to the provider verbatim", async () => {
      server.script(reply.text("ok"));
      const completionArgs = { temperature: 0.2, top_p: 0.9, seed: 7, stop: "END", extra_body: { repetition_penalty: 1.1 }, user_tag: "bub", max_tokens: 5 };
      await collect(clientFor({ completion_args: completionArgs, max_tokens: 100 }).client.stream(hello));
      const body = server.requests[0]!.body;
      assert.equal(body.temperature, 0.2);
      assert.equal(body.top_p, 0.9);
      assert.equal(body.seed, 7);
      assert.deepEqual(body.stop, ["END"]);
      assert.equal(body.repetition_penalty, 1.1);
      assert.equal(body.user_tag, "bub");
      assert.equal(body.max_tokens, 100, "max_tokens is managed by the runtime");
    });

    it("sends the session's reasoning effort over completion_args, and none for 'auto'", async () => {
      server.script(reply.text("a"), reply.text("b"), reply.text("c"));
      const { client } = clientFor({ completion_args: { reasoning_effort: "low" } });
      await collect(client.stream(hello));
      await collect(client.stream({ ...hello, reasoningEffort: "high" }));
      await collect(client.stream({ ...hello, reasoningEffort: "auto" }));
      assert.deepEqual(
        server.requests.map((request) => request.body.reasoning_effort),
        ["low", "high", undefined],
      );
    });

    it("passes client_args headers to the provider", async () => {
      server.script(reply.text("ok"));
      await collect(clientFor({ client_args: { headers: { "x-bub-test": "yes" } } }).client.stream(hello));
      assert.equal(server.requests[0]!.headers["x-bub-test"], "yes");
    });

    it("reaches OpenAI-compatible servers through the openai and openrouter providers too", async () => {
      server.script(reply.text("from openai", { usage: { prompt_tokens: 3, completion_tokens: 2 } }), reply.text("from openrouter", { usage: { prompt_tokens: 3, completion_tokens: 2 } }));
      const { client } = clientFor();
      const viaOpenAI = await collect(client.stream({ ...hello, model: "openai:gpt-test" }));
      const viaOpenRouter = await collect(client.stream({ ...hello, model: "openrouter:openrouter/free" }));
      assert.deepEqual(server.requests.map((request) => [request.path, request.body.model, request.body.stream_options]), [
        ["/v1/chat/completions", "gpt-test", { include_usage: true }],
        ["/v1/chat/completions", "openrouter/free", { include_usage: true }],
      ]);
      const texts = [viaOpenAI, viaOpenRouter].map((events) => events.flatMap((event) => (event.type === "text" ? [event.delta] : [])).join(""));
      assert.deepEqual(texts, ["from openai", "from openrouter"]);
      for (const events of [viaOpenAI, viaOpenRouter]) {
        const finish = events.at(-1)!;
        assert.ok(finish.type === "finish");
        assert.equal(finish.usage?.prompt_tokens, 3);
        assert.equal(finish.usage?.total_tokens, 5);
      }
    });
  });

  describe("context length and timeouts", () => {
    it("flags a context-length refusal so the agent can hand off", async () => {
      server.script(reply.contextLength(8192));
      const { error } = await failure(clientFor().client.stream(hello));
      assert.equal(error.kind, "provider");
      assert.equal(error.details?.context_length_exceeded, true);
      assert.equal(isContextLengthError(error), true);
      assert.match(error.message, /maximum context length is 8192 tokens/);
    });

    it("keeps the flag when the fallbacks fail too", async () => {
      server.script(reply.contextLength(), reply.error(400, "bad request"));
      const { error } = await failure(clientFor({ fallback_models: ["fake:model-b"] }).client.stream(hello));
      assert.equal(error.details?.context_length_exceeded, true);
      assert.equal(isContextLengthError(error), true);
    });

    it("aborts a call that exceeds model_timeout_seconds with a temporary error", async () => {
      server.script(reply.hang());
      // Long enough for the request to reach the server on a loaded machine, so the script is consumed.
      const { client } = clientFor({ model_timeout_seconds: 1 }, { retry: { maxAttempts: 1 } });
      const { error } = await failure(client.stream(hello));
      assert.equal(error.kind, "temporary");
      assert.equal(error.message, "fake:model-a did not finish within 1 s (BUB_MODEL_TIMEOUT_SECONDS); the call was aborted.");
    });

    it("stops at once when the caller aborts, without retrying", async () => {
      server.script(reply.hang());
      const controller = new AbortController();
      const { client, sleeps } = clientFor();
      const pending = collect(client.stream({ ...hello, signal: controller.signal }));
      await server.waitForRequest(0);
      controller.abort(new Error("user pressed ctrl-c"));
      await assert.rejects(pending, { message: "user pressed ctrl-c" });
      assert.deepEqual(sleeps, []);
      assert.equal(server.requests.length, 1);
    });

    it("stops waiting for a retry when the caller aborts", async () => {
      server.script(reply.error(503, "busy"));
      const controller = new AbortController();
      const client = createModelClient(settingsFor(), {
        env: {},
        sleep: (_ms, signal) => {
          controller.abort(new Error("gave up"));
          return new Promise((_resolve, reject) => (signal?.aborted ? reject(new Error("AbortError")) : signal?.addEventListener("abort", () => reject(new Error("AbortError")))));
        },
      });
      await assert.rejects(collect(client.stream({ ...hello, signal: controller.signal })), { message: "gave up" });
      assert.equal(server.requests.length, 1);
    });

    it("releases the call when the consumer stops early", async () => {
      server.script(reply.text(Array.from({ length: 50 }, (_, i) => `w${i} `)), reply.text("next"));
      const { client } = clientFor();
      for await (const event of client.stream(hello)) {
        assert.equal(event.type, "text");
        break;
      }
      const next = await collect(client.stream(hello));
      assert.equal(next[0]?.type === "text" && next[0].delta, "next");
    });
  });
});
