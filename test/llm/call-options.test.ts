import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { completionCallOptions } from "../../src/llm/call-options.ts";

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
