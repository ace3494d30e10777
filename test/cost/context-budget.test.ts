import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TapeEntry } from "../../src/kernel/tape-contract.ts";
import { contextTokens, contextUsageOf, formatContextUsage, sinceLastAnchor } from "../../src/cost/context-budget.ts";

let id = 0;
const entry = (kind: string, payload: Record<string, unknown>): TapeEntry => ({ id: ++id, kind, payload, meta: {}, date: "2026-12-01T10:00:00.000000+00:00" });
const run = (prompt: number, completion: number, model = "openai:gpt-4o-mini") => entry("event", { name: "run", data: { model, usage: { prompt_tokens: prompt, completion_tokens: completion } } });

describe("the context budget", () => {
  it("counts from the last call's usage plus an estimate of what came after it", () => {
    const entries = [entry("message", { role: "user", content: "x".repeat(4000) }), run(1200, 300), entry("tool_result", { results: ["y".repeat(398)] })];
    // 1200 + 300 measured; the result is ["yyy…"] = 402 characters → 101 tokens; the new prompt 8 characters → 2.
    assert.equal(contextTokens(entries, { extra: "continue" }), 1200 + 300 + 101 + 2);
  });

  it("estimates everything, system prompt included, when no call has been made since the anchor", () => {
    const entries = [entry("anchor", { name: "session/start", state: {} }), entry("message", { role: "user", content: "z".repeat(400) })];
    assert.equal(contextTokens(entries, { systemPrompt: "s".repeat(80) }), 1 + 100 + 20);
  });

  it("starts at the last anchor", () => {
    const entries = [run(9000, 1), entry("anchor", { name: "a", state: { summary: "s" } }), entry("message", { role: "user", content: "hi" })];
    assert.equal(sinceLastAnchor(entries).length, 2);
    assert.equal(contextTokens(sinceLastAnchor(entries)) < 100, true);
  });

  it("measures the share of the window of the tape's last model, as ,tape.info prints it", async () => {
    const usage = await contextUsageOf([run(64_000, 0)], { overrides: {}, budgetShare: 0.8 });
    assert.deepEqual(usage, { tokens: 64_000, model: "openai:gpt-4o-mini", window: 128_000, share: 0.5, budgetShare: 0.8 });
    assert.equal(formatContextUsage(usage), "64,000 of 128,000 tokens (50.0%; hand-off at 80%)");
    const local = await contextUsageOf([run(10, 0, "local:m")], { overrides: {}, budgetShare: 0.8 });
    assert.equal(formatContextUsage(local), "10 tokens; context window of local:m unknown (set cost.models in config.yml)");
    assert.equal(formatContextUsage(await contextUsageOf([], { overrides: {}, budgetShare: 0.8 })), "unknown (no model call on this tape yet)");
  });
});
