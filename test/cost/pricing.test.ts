import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { contextWindowOf, overridePrice, priceCall, tokenCounts } from "../../src/cost/pricing.ts";

const close = (actual: number | null, expected: number) => {
  assert.ok(actual !== null && Math.abs(actual - expected) < 1e-12, `${actual} ≠ ${expected}`);
};

describe("priceCall", () => {
  it("prices an OpenAI call from the catalog, cached input tokens at the cache price", async () => {
    // gpt-4o-mini: $0.15 / M input, $0.075 / M cached input, $0.60 / M output.
    const plain = await priceCall("openai:gpt-4o-mini", { prompt_tokens: 1_000_000, completion_tokens: 1_000_000 }, {});
    assert.equal(plain.source, "catalog");
    close(plain.usd, 0.75);
    const cached = await priceCall("openai:gpt-4o-mini", { prompt_tokens: 1_000_000, completion_tokens: 0, prompt_tokens_details: { cached_tokens: 500_000 } }, {});
    close(cached.usd, 0.075 + 0.0375);
  });

  it("prices Anthropic cache writes and reads apart from plain input", async () => {
    // claude-sonnet-4-5 below 200k input: $3 input, $3.75 cache write, $0.30 cache read, $15 output per M.
    const cost = await priceCall("anthropic:claude-sonnet-4-5", { prompt_tokens: 100_000, completion_tokens: 10_000, prompt_tokens_details: { cached_tokens: 40_000, cache_write_tokens: 20_000 } }, {});
    close(cost.usd, (40_000 * 3 + 20_000 * 3.75 + 40_000 * 0.3 + 10_000 * 15) / 1e6);
  });

  it("maps bub's gemini provider to the catalog's google one", async () => {
    const cost = await priceCall("gemini:gemini-2.5-flash", { prompt_tokens: 1000, completion_tokens: 1000 }, {});
    assert.equal(cost.source, "catalog");
    assert.ok((cost.usd ?? 0) > 0);
  });

  it("says when no price is known: an unknown provider, an unknown model, no usage", async () => {
    assert.deepEqual(await priceCall("local:small-model", { prompt_tokens: 10, completion_tokens: 5 }, {}), { usd: null, source: "unknown" });
    assert.deepEqual(await priceCall("openai:no-such-model-xyz", { prompt_tokens: 10, completion_tokens: 5 }, {}), { usd: null, source: "unknown" });
    assert.deepEqual(await priceCall("openai:gpt-4o-mini", null, {}), { usd: null, source: "unknown" });
  });

  it("takes the provider's own figure (OpenRouter usage.cost) over the catalog", async () => {
    assert.deepEqual(await priceCall("openrouter:openai/gpt-4o-mini", { prompt_tokens: 10, completion_tokens: 5, cost: 0.0042 }, {}), { usd: 0.0042, source: "provider" });
  });

  it("takes a config.yml override over everything, matched case-insensitively", async () => {
    const overrides = { "Local:Small-Model": { input_per_mtok: 2, output_per_mtok: 10, cache_read_per_mtok: 0.5 } };
    const cost = await priceCall("local:small-model", { prompt_tokens: 1000, completion_tokens: 100, prompt_tokens_details: { cached_tokens: 400 }, cost: 99 }, overrides);
    assert.equal(cost.source, "config");
    close(cost.usd, (600 * 2 + 400 * 0.5 + 100 * 10) / 1e6);
  });

  it("an override naming only a context window leaves the price to the catalog", async () => {
    const cost = await priceCall("openai:gpt-4o-mini", { prompt_tokens: 1_000_000, completion_tokens: 0 }, { "openai:gpt-4o-mini": { context_window: 1000 } });
    assert.equal(cost.source, "catalog");
    close(cost.usd, 0.15);
  });
});

describe("tokenCounts and overridePrice", () => {
  it("reads OpenAI field names, ignoring what is not a count", () => {
    assert.deepEqual(tokenCounts({ prompt_tokens: 10, completion_tokens: -1, prompt_tokens_details: { cached_tokens: 4, cache_write_tokens: "x" } }), { input: 10, cacheRead: 4, cacheWrite: 0, output: 0 });
  });

  it("needs both an input and an output price", () => {
    assert.equal(overridePrice({ input_per_mtok: 1 }, { input: 1, cacheRead: 0, cacheWrite: 0, output: 1 }), null);
    assert.equal(overridePrice(null, { input: 1, cacheRead: 0, cacheWrite: 0, output: 1 }), null);
  });
});

describe("contextWindowOf", () => {
  it("reads the catalog, follows an OpenRouter id to its vendor, and lets config.yml override", async () => {
    assert.equal(await contextWindowOf("openai:gpt-4o-mini", {}), 128_000);
    assert.equal(await contextWindowOf("openrouter:anthropic/claude-sonnet-4-5", {}), 200_000);
    assert.equal(await contextWindowOf("openai:gpt-4o-mini", { "openai:gpt-4o-mini": { context_window: 4096 } }), 4096);
    assert.equal(await contextWindowOf("local:small-model", {}), null);
  });
});
