/** The harness of the runModelStep tests: a model client on the fake OpenAI server, interception hooks, event collection. */
import { testTurnContext } from "../support/framework.ts";
import { AgentHooks } from "../../src/agent/interceptors.ts";
import type { BubPlugin } from "../../src/kernel/hooks.ts";
import { type LlmCallRequest, type LlmCallResult } from "../../src/kernel/interception.ts";
import { HookRuntime } from "../../src/kernel/runtime.ts";
import type { StreamEvent } from "../../src/kernel/stream.ts";
import { createModelClient } from "../../src/llm/model-client.ts";
import { runModelStep, type ModelStepOptions } from "../../src/llm/model-step.ts";
import { defaultModelSettings, type ModelSettings } from "../../src/llm/settings.ts";
import { type StepRecord } from "../../src/llm/step-record.ts";
import { useFakeOpenAI } from "../support/fake-openai-suite.ts";
import type { FakeOpenAI } from "../support/fake-openai.ts";

/** Builds the helpers over `server` (from `useFakeOpenAI()`). */
export function modelStepHarness(server: FakeOpenAI) {
  function settingsFor(overrides: Partial<ModelSettings> = {}): ModelSettings {
    return defaultModelSettings({ model: "fake:model-a", api_base: server.url, api_key: "sk-test", max_tokens: 1000, ...overrides });
  }

  /** Interception hooks over a real HookRuntime; later plugins run first. */
  function hooksWith(...plugins: BubPlugin[]): AgentHooks {
    const runtime = new HookRuntime();
    plugins.forEach((plugin, index) => runtime.register(plugin, plugin.name ?? `plugin-${index}`));
    return new AgentHooks(runtime, testTurnContext());
  }

  /** Records every afterLlmCall. */
  function llmObserver(calls: { request: LlmCallRequest; result: LlmCallResult }[]): BubPlugin {
    return { name: "observer", afterLlmCall: ({ request, result }) => void calls.push({ request, result }) };
  }

  interface Harness {
    records: StepRecord[];
    options(overrides?: Partial<ModelStepOptions<string>>): ModelStepOptions<string>;
  }

  function harness(settings: Partial<ModelSettings> = {}): Harness {
    const records: StepRecord[] = [];
    const client = createModelClient(settingsFor(settings), { env: {}, sleep: async () => undefined, retry: { maxAttempts: 1 } });
    let runs = 0;
    return {
      records,
      options: (overrides = {}) => ({
        client,
        model: "fake:model-a",
        systemPrompt: "You are Bub.",
        history: [
          { role: "user", content: "earlier question" },
          { role: "assistant", content: "earlier answer" },
        ],
        prompt: "what now?",
        state: {},
        tape: "tape:session",
        record: (record) => void records.push(record),
        runId: () => `run-test-${++runs}`,
        ...overrides,
      }),
    };
  }

  async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
    const events: StreamEvent[] = [];
    for await (const event of stream) events.push(event);
    return events;
  }

  const kinds = (events: StreamEvent[]) => events.map((event) => event.kind);

  return { settingsFor, hooksWith, llmObserver, harness, collect, kinds };
}
