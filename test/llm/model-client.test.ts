import assert from "node:assert/strict";
import { beforeEach, describe, it } from "node:test";
import { BubError } from "../../src/kernel/errors.ts";
import { isContextLengthError } from "../../src/llm/errors.ts";
import { completionCallOptions, createModelClient, type ModelCallEvent, type ModelCallRequest, type ModelClientOptions } from "../../src/llm/model-client.ts";
import { defaultModelSettings, type ModelSettings } from "../../src/llm/settings.ts";
import { reply } from "../support/fake-openai.ts";
import { useFakeOpenAI } from "../support/fake-openai-suite.ts";

describe("model client (against a fake OpenAI server)", () => {
  const logLines: string[] = [];
  const server = useFakeOpenAI({ onLog: (_level, _namespace, message) => void logLines.push(message) });
  beforeEach(() => {
    logLines.length = 0;
  });

  /** Settings pointing every provider at the fake server. */
  function settingsFor(overrides: Partial<ModelSettings> = {}): ModelSettings {
    return defaultModelSettings({ model: "fake:model-a", api_base: server.url, api_key: "sk-test", ...overrides });
  }

  /** A client whose retry waits are recorded instead of slept. */
  function clientFor(overrides: Partial<ModelSettings> = {}, options: ModelClientOptions = {}) {
    const sleeps: number[] = [];
    const client = createModelClient(settingsFor(overrides), { env: {}, sleep: async (ms) => void sleeps.push(ms), ...options });
    return { client, sleeps };
  }

  async function collect(stream: AsyncIterable<ModelCallEvent>): Promise<ModelCallEvent[]> {
    const events: ModelCallEvent[] = [];
    for await (const event of stream) events.push(event);
    return events;
  }

  async function failure(stream: AsyncIterable<ModelCallEvent>): Promise<{ events: ModelCallEvent[]; error: BubError }> {
    const events: ModelCallEvent[] = [];
    try {
      for await (const event of stream) events.push(event);
    } catch (error) {
      assert.ok(BubError.isInstance(error), `expected a BubError, got ${String(error)}`);
      return { events, error };
    }
    assert.fail("the stream did not fail");
  }

  const hello: ModelCallRequest = { model: "fake:model-a", messages: [{ role: "user", content: "hello" }] };

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
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "fs_read", arguments: '{"path":"a"}' } }] },
        { role: "tool", tool_call_id: "c1", content: "contents of a" },
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

  describe("retries", () => {
    it("retries a 429 after its retry-after, then a 5xx with backoff, then succeeds", async () => {
      server.script(reply.error(429, "Rate limit reached", { retryAfter: 2 }), reply.error(503, "Service overloaded"), reply.text("finally"));
      const { client, sleeps } = clientFor();
      const events = await collect(client.stream(hello));
      assert.equal(events.filter((event) => event.type === "text").map((event) => (event.type === "text" ? event.delta : "")).join(""), "finally");
      assert.deepEqual(sleeps, [2000, 1000]);
      assert.equal(server.requests.length, 3);
      assert.ok(logLines.some((line) => line.startsWith("model.retry model=fake:model-a attempt=2/3 delay_ms=2000")));
    });

    it("caps a long retry-after", async () => {
      server.script(reply.error(429, "slow down", { retryAfter: 3600 }), reply.text("ok"));
      const { client, sleeps } = clientFor({}, { retry: { maxRetryAfterMs: 5000 } });
      await collect(client.stream(hello));
      assert.deepEqual(sleeps, [5000]);
    });

    it("retries a connection dropped before any output", async () => {
      server.script(reply.drop(0), reply.text("recovered"));
      const { client, sleeps } = clientFor();
      const events = await collect(client.stream(hello));
      assert.equal(events[0]?.type === "text" && events[0].delta, "recovered");
      assert.deepEqual(sleeps, [500]);
    });

    it("does not retry once output has been streamed", async () => {
      server.script(reply.drop(3, "one two three four five"));
      const { client, sleeps } = clientFor({ fallback_models: ["fake:model-b"] });
      const { events, error } = await failure(client.stream(hello));
      assert.deepEqual(
        events.map((event) => (event.type === "text" ? event.delta : event.type)),
        ["one ", "two "],
      );
      assert.equal(error.kind, "temporary");
      assert.match(error.message, /the connection failed/);
      assert.deepEqual(sleeps, []);
      assert.equal(server.requests.length, 1, "neither retried nor passed to a fallback");
    });

    it("does not retry refusals or key problems", async () => {
      server.script(reply.error(400, "Invalid 'messages'"), reply.error(401, "Incorrect API key provided"));
      const { client, sleeps } = clientFor();
      const refused = await failure(client.stream(hello));
      assert.equal(refused.error.kind, "provider");
      assert.equal(refused.error.message, "fake:model-a returned HTTP 400: Invalid 'messages'");
      const unauthorized = await failure(client.stream(hello));
      assert.equal(unauthorized.error.kind, "config");
      assert.match(unauthorized.error.message, /Check the API key \(BUB_FAKE_API_KEY or BUB_API_KEY\)/);
      assert.deepEqual(sleeps, []);
      assert.equal(server.requests.length, 2);
    });

    it("gives up on a candidate after maxAttempts", async () => {
      server.script(reply.error(500, "boom"), reply.error(500, "boom"), reply.error(500, "boom"));
      const { client, sleeps } = clientFor();
      const { error } = await failure(client.stream(hello));
      assert.equal(error.kind, "temporary");
      assert.equal(error.details?.status, 500);
      assert.deepEqual(sleeps, [500, 1000]);
      assert.equal(server.requests.length, 3);
    });
  });

  describe("fallback models", () => {
    it("moves to the next candidate after the retries are exhausted", async () => {
      server.script(reply.error(503, "down"), reply.error(503, "down"), reply.error(503, "down"), reply.text("fallback answer"));
      const { client } = clientFor({ fallback_models: ["fake:model-b"] });
      const events = await collect(client.stream(hello));
      assert.deepEqual(server.requests.map((request) => request.body.model), ["model-a", "model-a", "model-a", "model-b"]);
      const finish = events.at(-1)!;
      assert.ok(finish.type === "finish");
      assert.equal(finish.model, "fake:model-b");
      assert.ok(logLines.some((line) => line.startsWith("model candidate failed; trying fallback model=fake:model-b failed=fake:model-a")));
    });

    it("applies to any requested model, not only the configured default", async () => {
      server.script(reply.error(401, "nope"), reply.text("ok"));
      const { client } = clientFor({ model: "fake:default", fallback_models: ["fake:model-b"] });
      await collect(client.stream({ ...hello, model: "fake:per-session" }));
      assert.deepEqual(server.requests.map((request) => request.body.model), ["per-session", "model-b"]);
    });

    it("lists each candidate's failure when all fail, configuration errors included", async () => {
      server.script(reply.error(401, "Incorrect API key"));
      const { client } = clientFor({ fallback_models: ["mystery:model", "fake:model-a"], api_base: { fake: server.url } });
      assert.deepEqual(client.candidates("fake:model-a"), ["fake:model-a", "mystery:model"]);
      const { error } = await failure(client.stream(hello));
      assert.equal(error.kind, "config");
      assert.equal(
        error.message,
        [
          "All 2 model candidates failed:",
          "1) fake:model-a: [config] fake:model-a returned HTTP 401: Incorrect API key. Check the API key (BUB_FAKE_API_KEY or BUB_API_KEY).",
          "2) mystery:model: [config] Unknown provider 'mystery' in model 'mystery:model': set BUB_MYSTERY_API_BASE (or BUB_API_BASE) to its OpenAI-compatible endpoint, or use one of: openrouter, openai, anthropic, deepseek, gemini, groq, mistral, xai, ollama.",
        ].join("\n"),
      );
      assert.deepEqual(
        (error.details?.candidates as { model: string; kind: string }[]).map(({ model, kind }) => [model, kind]),
        [
          ["fake:model-a", "config"],
          ["mystery:model", "config"],
        ],
      );
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
      const { client } = clientFor({ model_timeout_seconds: 0.05 }, { retry: { maxAttempts: 1 } });
      const { error } = await failure(client.stream(hello));
      assert.equal(error.kind, "temporary");
      assert.equal(error.message, "fake:model-a did not finish within 0.05 s (model_timeout_seconds); the call was aborted.");
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

  describe("completionCallOptions", () => {
    it("maps reasoning effort levels to the AI SDK setting and custom values to provider options", () => {
      assert.deepEqual(completionCallOptions({}, { family: "anthropic", optionsKey: "anthropic" }, "high"), { reasoning: "high" });
      assert.deepEqual(completionCallOptions({}, { family: "openai-compatible", optionsKey: "local" }, "turbo"), { providerOptions: { local: { reasoningEffort: "turbo" } } });
      assert.deepEqual(completionCallOptions({ reasoning_effort: "low" }, { family: "openai", optionsKey: "openai" }, null), { reasoning: "low" });
    });

    it("merges explicit providerOptions", () => {
      assert.deepEqual(
        completionCallOptions({ providerOptions: { openai: { serviceTier: "flex" } }, temperature: 0 }, { family: "openai", optionsKey: "openai" }, undefined),
        { temperature: 0, providerOptions: { openai: { serviceTier: "flex" } } },
      );
    });
  });
});
