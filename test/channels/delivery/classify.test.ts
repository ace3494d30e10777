import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { GrammyError, HttpError } from "grammy";
import { backoffDelay, networkFailure, nextStep, type RetryPolicy } from "../../../src/channels/delivery/classify.ts";
import { classifyTelegramFailure } from "../../../src/channels/telegram/delivery.ts";

const POLICY: RetryPolicy = { maxAttempts: 4, backoffMs: 1000, maxBackoffMs: 10_000 };
const fresh = { attempts: 0, possiblyRepeated: false };

function answered(code: number, description: string, parameters: Record<string, number> = {}): GrammyError {
  return new GrammyError(`Call to 'sendMessage' failed!`, { ok: false, error_code: code, description, parameters }, "sendMessage", {});
}

/** An undici fetch failure with a cause carrying `code`, wrapped as grammY wraps it. */
function noAnswer(code: string, message = "fetch failed"): HttpError {
  const cause = Object.assign(new Error(code), { code });
  return new HttpError("Network request for 'sendMessage' failed!", new TypeError(message, { cause }));
}

describe("classifyTelegramFailure", () => {
  it("retries 429 with its retry_after, and 5xx", () => {
    assert.deepEqual(classifyTelegramFailure(answered(429, "Too Many Requests: retry after 7", { retry_after: 7 })), { kind: "retryable", reason: "sendMessage answered 429 Too Many Requests: retry after 7", retryAfterMs: 7000 });
    for (const code of [500, 502, 503, 504]) assert.equal(classifyTelegramFailure(answered(code, "Bad Gateway")).kind, "retryable", String(code));
  });

  it("gives up at once on 403 (blocked), 400 (chat not found), 401 and other answers", () => {
    for (const [code, description] of [[403, "Forbidden: bot was blocked by the user"], [400, "Bad Request: chat not found"], [401, "Unauthorized"], [409, "Conflict"]] as const) {
      assert.deepEqual(classifyTelegramFailure(answered(code, description)), { kind: "permanent", reason: `sendMessage answered ${code} ${description}` });
    }
  });

  it("retries a connection that could not be made, and calls one that died after the request left unknown", () => {
    for (const code of ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "UND_ERR_CONNECT_TIMEOUT", "EHOSTUNREACH"]) assert.equal(classifyTelegramFailure(noAnswer(code)).kind, "retryable", code);
    for (const code of ["ECONNRESET", "UND_ERR_SOCKET", "EPIPE", "UND_ERR_HEADERS_TIMEOUT", "ABORT_ERR"]) assert.equal(classifyTelegramFailure(noAnswer(code)).kind, "unknown", code);
    assert.equal(classifyTelegramFailure(new HttpError("Network request for 'sendMessage' failed!", new Error("aborted"))).kind, "unknown");
  });

  it("never shows the bot token, and makes a fault of ours permanent", () => {
    const failure = classifyTelegramFailure(new HttpError("Network request for 'sendMessage' failed!", new Error("connect to https://api.telegram.org/bot123:SECRET-x/sendMessage")));
    assert.doesNotMatch(failure.reason, /SECRET/);
    assert.deepEqual(classifyTelegramFailure(new TypeError("boom")), { kind: "permanent", reason: "boom" });
  });
});

describe("nextStep", () => {
  it("backs off doubling from the base, capped, and honours a longer retry_after", () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6].map((attempts) => backoffDelay(attempts, POLICY)), [1000, 2000, 4000, 8000, 10_000, 10_000]);
    assert.deepEqual(nextStep(fresh, { kind: "retryable", reason: "502" }, POLICY), { action: "retry", delayMs: 1000, attempts: 1, possiblyRepeated: false, error: "502" });
    const step = nextStep(fresh, { kind: "retryable", reason: "429", retryAfterMs: 5000 }, POLICY);
    assert.ok(step.action === "retry" && step.delayMs === 5000);
  });

  it("gives up after maxAttempts retryable failures, and at once on a retry_after beyond the longest wait", () => {
    assert.equal(nextStep({ attempts: 2, possiblyRepeated: false }, { kind: "retryable", reason: "500" }, POLICY).action, "retry");
    assert.deepEqual(nextStep({ attempts: 3, possiblyRepeated: false }, { kind: "retryable", reason: "500" }, POLICY), { action: "dead", attempts: 4, possiblyRepeated: false, error: "500 (gave up after 4 tries)" });
    assert.equal(nextStep(fresh, { kind: "retryable", reason: "429", retryAfterMs: 60_000 }, POLICY).action, "dead");
  });

  it("makes a permanent failure a dead letter at once", () => {
    assert.deepEqual(nextStep(fresh, { kind: "permanent", reason: "403" }, POLICY), { action: "dead", attempts: 1, possiblyRepeated: false, error: "403" });
  });

  it("retries an unknown failure once, marked possibly repeated, and gives up on a second", () => {
    const first = nextStep(fresh, { kind: "unknown", reason: "reset" }, POLICY);
    assert.deepEqual(first, { action: "retry", delayMs: 1000, attempts: 1, possiblyRepeated: true, error: "reset" });
    const second = nextStep({ attempts: 1, possiblyRepeated: true }, { kind: "unknown", reason: "reset" }, POLICY);
    assert.equal(second.action, "dead");
    assert.equal(second.possiblyRepeated, true);
    // A retryable failure after it keeps the mark and is retried as usual.
    assert.deepEqual(nextStep({ attempts: 1, possiblyRepeated: true }, { kind: "retryable", reason: "500" }, POLICY), { action: "retry", delayMs: 2000, attempts: 2, possiblyRepeated: true, error: "500" });
  });

  it("tells a connection that was never made from one cut off later by the codes on the cause chain", () => {
    assert.equal(networkFailure({ cause: { cause: { code: "ECONNREFUSED" } } }, "x").kind, "retryable");
    assert.equal(networkFailure({ cause: { code: "ECONNRESET" } }, "x").kind, "unknown");
    assert.equal(networkFailure(null, "x").kind, "unknown");
  });
});
