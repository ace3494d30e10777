// One model call attempt: a response that ends normally is read to its close and its signal
// is left alone (no abort, no cancel: nothing to tear down); one left early is torn down.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { streamAttempt } from "../../src/llm/model-attempt.ts";
import { resolveModelTarget } from "../../src/llm/providers.ts";
import { defaultModelSettings } from "../../src/llm/settings.ts";

const FINISH: LanguageModelV4StreamPart = {
  type: "finish",
  finishReason: { unified: "stop", raw: "stop" },
  usage: { inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 2, text: 2, reasoning: 0 } },
} as LanguageModelV4StreamPart;

/** A language model whose stream sends the parts, then (optionally) stays open. */
function scriptedModel(parts: LanguageModelV4StreamPart[], seen: { options?: LanguageModelV4CallOptions; cancelled: boolean }): LanguageModelV4 {
  return {
    specificationVersion: "v4",
    provider: "test",
    modelId: "m",
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error("not used")),
    doStream: async (options: LanguageModelV4CallOptions) => {
      seen.options = options;
      const stream = new ReadableStream<LanguageModelV4StreamPart>({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
        cancel() {
          seen.cancelled = true;
        },
      });
      return { stream };
    },
  } as unknown as LanguageModelV4;
}

const settings = defaultModelSettings({ model: "openai:m", api_key: "sk-test" });
const target = resolveModelTarget("openai:m", settings, {});

describe("streamAttempt", () => {
  it("leaves the call's signal alone when the response ends normally", async () => {
    const seen: { options?: LanguageModelV4CallOptions; cancelled: boolean } = { cancelled: false };
    const model = scriptedModel([{ type: "text-delta", id: "t", delta: "hi" } as LanguageModelV4StreamPart, FINISH], seen);
    const events = [];
    for await (const event of streamAttempt({ candidate: "openai:m", target, model }, { model: "openai:m", messages: [] }, settings, { emitted: false })) events.push(event.type);
    assert.deepEqual(events, ["text", "finish"]);
    assert.equal(seen.options?.abortSignal?.aborted, false, "a finished response is not aborted");
    assert.equal(seen.cancelled, false);
  });

  it("aborts the call and cancels the stream when the consumer stops early", async () => {
    const seen: { options?: LanguageModelV4CallOptions; cancelled: boolean } = { cancelled: false };
    const model = scriptedModel([{ type: "text-delta", id: "t", delta: "hi" } as LanguageModelV4StreamPart, { type: "text-delta", id: "t", delta: " there" } as LanguageModelV4StreamPart, FINISH], seen);
    for await (const event of streamAttempt({ candidate: "openai:m", target, model }, { model: "openai:m", messages: [] }, settings, { emitted: false })) {
      assert.equal(event.type, "text");
      break;
    }
    assert.equal(seen.options?.abortSignal?.aborted, true);
  });
});
