/**
 * The harness of the model client tests: a fake OpenAI server for the enclosing
 * `describe()` block, clients pointed at it whose retry waits are recorded instead of
 * slept, and helpers that read a call's events or its error.
 */
import assert from "node:assert/strict";
import { beforeEach } from "node:test";
import { BubError } from "../../src/kernel/errors.ts";
import type { ModelCallEvent, ModelCallRequest } from "../../src/llm/model-call.ts";
import { createModelClient, type ModelClientOptions } from "../../src/llm/model-client.ts";
import { defaultModelSettings, type ModelSettings } from "../../src/llm/settings.ts";
import { useFakeOpenAI } from "../support/fake-openai-suite.ts";

/** A one-message request to the default model, `fake:model-a`. */
export const hello: ModelCallRequest = { model: "fake:model-a", messages: [{ role: "user", content: "hello" }] };

/** Every event of a call that succeeds. */
export async function collect(stream: AsyncIterable<ModelCallEvent>): Promise<ModelCallEvent[]> {
  const events: ModelCallEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The events of a call that fails, and its error (which must be a BubError). */
export async function failure(stream: AsyncIterable<ModelCallEvent>): Promise<{ events: ModelCallEvent[]; error: BubError }> {
  const events: ModelCallEvent[] = [];
  try {
    for await (const event of stream) events.push(event);
  } catch (error) {
    assert.ok(BubError.isInstance(error), `expected a BubError, got ${String(error)}`);
    return { events, error };
  }
  assert.fail("the stream did not fail");
}

/** Registers the fake server's hooks in the calling `describe()` block; the log lines are cleared before each test. */
export function useModelClientServer() {
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

  return { server, logLines, settingsFor, clientFor };
}
