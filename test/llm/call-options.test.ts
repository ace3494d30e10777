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

  it("passes standard settings of the SDK's types and leaves out the rest", () => {
    assert.deepEqual(
      completionCallOptions({ temperature: "hot", top_p: 0.5, stop: "END", seed: [1] }, { family: "openai", optionsKey: "openai" }, undefined),
      { topP: 0.5, stopSequences: ["END"] },
    );
    assert.deepEqual(completionCallOptions({ stopSequences: ["a", "b"], extra_body: { top_k_custom: 3 } }, { family: "openai-compatible", optionsKey: "local" }, undefined), {
      stopSequences: ["a", "b"],
      providerOptions: { local: { top_k_custom: 3 } },
    });
  });
});
