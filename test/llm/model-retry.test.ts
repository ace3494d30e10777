import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BubError } from "../../src/kernel/errors.ts";
import { DEFAULT_RETRY_POLICY, fallbackCandidates, retryDelay } from "../../src/llm/model-retry.ts";
import { reply } from "../support/fake-openai.ts";
import { collect, failure, hello, useModelClientServer } from "./model-client-support.ts";

describe("model client retries and fallbacks (against a fake OpenAI server)", () => {
  const { server, logLines, clientFor } = useModelClientServer();

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
});

describe("retry policy", () => {
  it("tries the model, then each distinct fallback", () => {
    assert.deepEqual(fallbackCandidates(" a:b ", ["c:d", "a:b", " c:d", "", 3, "e:f"]), ["a:b", "c:d", "e:f"]);
    assert.deepEqual(fallbackCandidates("a:b", null), ["a:b"]);
  });

  it("doubles the delay from the base up to its cap, and honours retry-after up to its own", () => {
    const failure = new BubError("temporary", "busy");
    assert.deepEqual([1, 2, 3, 6].map((attempt) => retryDelay(failure, attempt, DEFAULT_RETRY_POLICY)), [500, 1000, 2000, 8000]);
    const later = new BubError("temporary", "slow down", { details: { retry_after: 2 } });
    assert.equal(retryDelay(later, 1, DEFAULT_RETRY_POLICY), 2000);
  });
});
