import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { APICallError, LoadAPIKeyError } from "@ai-sdk/provider";
import { BubError } from "../../src/kernel/errors.ts";
import { allCandidatesFailedError, classifyModelError, isContextLengthError, retryAfterSeconds } from "../../src/llm/errors.ts";
import { normalizeUsage } from "../../src/llm/usage.ts";
import { formatRunId, generateRunId } from "../../src/llm/run-id.ts";

function apiError(statusCode: number | undefined, message: string, headers: Record<string, string> = {}, isRetryable = false): APICallError {
  return new APICallError({ message, url: "http://x/v1/chat/completions", requestBodyValues: {}, statusCode, responseHeaders: headers, responseBody: "{}", isRetryable });
}

describe("isContextLengthError", () => {
  it("matches the providers' wordings of a too-long prompt, case-insensitively", () => {
    for (const message of [
      "This model's maximum context length is 8192 tokens",
      "context_length_exceeded",
      "Input exceeds the context window of this model",
      "prompt is too long: 210000 tokens > 200000 maximum",
      "Request exceeds token limit",
      "Prompt Too Long",
    ]) {
      assert.equal(isContextLengthError(message), true, message);
    }
  });

  it("does not match other failures", () => {
    for (const message of ["Rate limit exceeded", "Invalid API key", "context is fine"]) assert.equal(isContextLengthError(message), false, message);
  });

  it("honours the flag on a classified error and the message of any error", () => {
    assert.equal(isContextLengthError(new BubError("provider", "too big", { details: { context_length_exceeded: true } })), true);
    assert.equal(isContextLengthError(new Error("maximum context length is 4096")), true);
  });
});

describe("classifyModelError", () => {
  it("makes 429, 5xx and network failures temporary, keeping retry-after", () => {
    const limited = classifyModelError(apiError(429, "Rate limited", { "retry-after": "3" }), "openai:gpt");
    assert.equal(limited.kind, "temporary");
    assert.equal(limited.message, "openai:gpt returned HTTP 429: Rate limited");
    assert.deepEqual(limited.details, { model: "openai:gpt", status: 429, retry_after: 3, body: "{}" });
    assert.equal(classifyModelError(apiError(503, "down"), "m:x").kind, "temporary");
    assert.equal(classifyModelError(apiError(undefined, "Cannot connect to API: ECONNREFUSED", {}, true), "m:x").kind, "temporary");
    const reset = Object.assign(new TypeError("fetch failed"), { cause: Object.assign(new Error("socket"), { code: "ECONNRESET" }) });
    assert.equal(classifyModelError(reset, "m:x").kind, "temporary");
  });

  it("makes a silent server a timeout naming the model and BUB_MODEL_IDLE_TIMEOUT_SECONDS, not a retryable network failure", () => {
    const undiciError = (code: string) => Object.assign(new Error("Timeout Error"), { code });
    // undici's headersTimeout, as the AI SDK reports a failed fetch.
    const headers = new APICallError({ message: "Cannot connect to API: Headers Timeout Error", url: "http://x", requestBodyValues: {}, cause: undiciError("UND_ERR_HEADERS_TIMEOUT"), isRetryable: true });
    const silent = classifyModelError(headers, "openai:gpt-4o-mini", { idleTimeoutSeconds: 120 });
    assert.equal(silent.kind, "timeout");
    assert.equal(silent.message, "openai:gpt-4o-mini sent nothing for 120 s (BUB_MODEL_IDLE_TIMEOUT_SECONDS)");
    assert.deepEqual(silent.details, { model: "openai:gpt-4o-mini", idle_timeout: true, timeout_seconds: 120 });
    assert.equal(silent.cause, headers);
    // undici's bodyTimeout, as the response stream reports it.
    const body = Object.assign(new TypeError("terminated"), { cause: undiciError("UND_ERR_BODY_TIMEOUT") });
    const stalled = classifyModelError(body, "local:any");
    assert.equal(stalled.kind, "timeout");
    assert.equal(stalled.message, "local:any sent nothing for longer than its idle timeout (BUB_MODEL_IDLE_TIMEOUT_SECONDS)");
    // A connection that could not be opened in time stays a temporary network failure.
    assert.equal(classifyModelError(Object.assign(new TypeError("fetch failed"), { cause: undiciError("UND_ERR_CONNECT_TIMEOUT") }), "m:x").kind, "temporary");
  });

  it("makes 401/403 and missing keys config errors that say what to check", () => {
    const unauthorized = classifyModelError(apiError(401, "Invalid API key"), "openrouter:x");
    assert.equal(unauthorized.kind, "config");
    assert.equal(unauthorized.message, "openrouter:x returned HTTP 401: Invalid API key. Check the API key (BUB_OPENROUTER_API_KEY or BUB_API_KEY).");
    assert.equal(classifyModelError(new LoadAPIKeyError({ message: "missing" }), "openai:x").kind, "config");
  });

  it("makes other refusals provider errors and flags context-length ones", () => {
    const tooLong = classifyModelError(apiError(400, "This model's maximum context length is 8192 tokens."), "fake:m");
    assert.equal(tooLong.kind, "provider");
    assert.equal(tooLong.details?.context_length_exceeded, true);
    assert.equal(isContextLengthError(tooLong), true);
    assert.equal(classifyModelError(apiError(404, "no such model"), "fake:m").details?.context_length_exceeded, undefined);
  });

  it("classifies error chunks from inside a stream by their code", () => {
    assert.equal(classifyModelError({ message: "upstream overloaded", code: 502 }, "m:x").kind, "temporary");
    const refused = classifyModelError({ error: { message: "bad request" } }, "m:x");
    assert.equal(refused.kind, "provider");
    assert.equal(refused.message, "m:x reported an error: bad request");
  });

  it("returns BubErrors unchanged and keeps the cause of others", () => {
    const original = new BubError("config", "x");
    assert.equal(classifyModelError(original, "m:x"), original);
    const cause = new Error("weird");
    const classified = classifyModelError(cause, "m:x");
    assert.equal(classified.kind, "unknown");
    assert.equal(classified.cause, cause);
  });
});

describe("retryAfterSeconds", () => {
  it("reads retry-after-ms, retry-after seconds and HTTP dates", () => {
    assert.equal(retryAfterSeconds(apiError(429, "x", { "retry-after-ms": "1500" })), 1.5);
    assert.equal(retryAfterSeconds(apiError(429, "x", { "Retry-After": "4" })), 4);
    const now = Date.parse("2026-01-01T00:00:00Z");
    assert.equal(retryAfterSeconds(apiError(429, "x", { "retry-after": "Thu, 01 Jan 2026 00:00:10 GMT" }), () => now), 10);
    assert.equal(retryAfterSeconds(apiError(429, "x")), null);
    assert.equal(retryAfterSeconds(new Error("x")), null);
  });
});

describe("allCandidatesFailedError", () => {
  it("lists each candidate's failure and keeps the first kind", () => {
    const error = allCandidatesFailedError([
      { model: "a:1", error: new BubError("temporary", "a:1 returned HTTP 503: down") },
      { model: "b:2", error: new BubError("config", "No API key for provider 'b'", { details: { provider: "b" } }) },
    ]);
    assert.equal(error.kind, "temporary");
    assert.equal(error.message, "All 2 model candidates failed:\n1) a:1: [temporary] a:1 returned HTTP 503: down\n2) b:2: [config] No API key for provider 'b'");
    assert.deepEqual(error.details?.candidates, [
      { model: "a:1", kind: "temporary", message: "a:1 returned HTTP 503: down" },
      { model: "b:2", kind: "config", message: "No API key for provider 'b'", details: { provider: "b" } },
    ]);
  });

  it("returns a single candidate's error unchanged", () => {
    const only = new BubError("provider", "x");
    assert.equal(allCandidatesFailedError([{ model: "a:1", error: only }]), only);
  });
});

describe("normalizeUsage", () => {
  it("keeps an OpenAI-shaped raw usage, adding total_tokens when missing", () => {
    const usage = normalizeUsage({
      inputTokens: { total: 10 },
      outputTokens: { total: 2 },
      raw: { prompt_tokens: 10, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 4 }, cost: 0.01 },
    });
    assert.deepEqual(usage, { prompt_tokens: 10, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 4 }, cost: 0.01, total_tokens: 12 });
  });

  it("maps the AI SDK's normalized counts for other providers", () => {
    const usage = normalizeUsage({
      inputTokens: { total: 120, noCache: 20, cacheRead: 90, cacheWrite: 10 },
      outputTokens: { total: 30, text: 25, reasoning: 5 },
      raw: { input_tokens: 20, cache_read_input_tokens: 90 },
    });
    assert.deepEqual(usage, {
      prompt_tokens: 120,
      completion_tokens: 30,
      total_tokens: 150,
      prompt_tokens_details: { cached_tokens: 90, cache_write_tokens: 10 },
      completion_tokens_details: { reasoning_tokens: 5 },
    });
  });

  it("returns null when nothing was reported", () => {
    assert.equal(normalizeUsage({ inputTokens: {}, outputTokens: {} }), null);
    assert.equal(normalizeUsage(undefined), null);
  });
});

describe("generateRunId", () => {
  it("formats UTC time with microseconds", () => {
    assert.equal(formatRunId(Date.UTC(2026, 0, 2, 3, 4, 5) * 1000 + 123456), "run-20260102T030405123456Z");
    assert.equal(formatRunId(Date.UTC(2026, 11, 31, 23, 59, 59) * 1000 + 7), "run-20261231T235959000007Z");
    assert.match(generateRunId(), /^run-\d{8}T\d{12}Z$/);
  });

  it("never repeats an id within a process", () => {
    const ids = new Set(Array.from({ length: 1000 }, () => generateRunId()));
    assert.equal(ids.size, 1000);
  });
});
