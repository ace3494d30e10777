/**
 * Correlation ids on the tape (issue 19): every entry a turn writes carries the turn's id,
 * the entries of a model step its model call's id, and what a tool call writes the call's id.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { z } from "zod";
import { Agent } from "../../src/agent/agent.ts";
import { createBub } from "../../src/builtin/create.ts";
import { currentCorrelation } from "../../src/kernel/correlation.ts";
import type { TapeEntry } from "../../src/kernel/tape-contract.ts";
import type { LogLevel } from "../../src/kernel/log.ts";
import { defaultModelSettings } from "../../src/llm/settings.ts";
import { createMemoryTapeStore } from "../../src/tape/memory-store.ts";
import { createToolRegistry } from "../../src/tools/registry.ts";
import { defineTool, type ToolContext } from "../../src/tools/tool.ts";
import type { Tape } from "../../src/tape/tape.ts";
import { reply } from "../support/fake-openai.ts";
import { useFakeOpenAI } from "../support/fake-openai-suite.ts";
import { basePlugin, kernelFramework } from "../support/framework.ts";
import { tempDir } from "../support/temp.ts";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A tool that writes to the turn's tape, as `tape.handoff` or the spill sidecar do. */
const noteTool = defineTool({
  name: "note.write",
  description: "Write a note event on the tape",
  parameters: z.object({ text: z.string() }),
  context: true,
  run: async ({ text }, context: ToolContext<Tape>) => {
    await context.tape.appendEvent("note", { text, seen: currentCorrelation()?.toolCallId ?? null });
    return `noted: ${text}`;
  },
});

describe("correlation ids on the tape", () => {
  const logs: { level: LogLevel; message: string }[] = [];
  const server = useFakeOpenAI({ onLog: (level, _namespace, message) => void logs.push({ level, message }) });

  async function harness() {
    const framework = kernelFramework({ workspace: "/tmp", home: "/tmp/bub-correlation-test" });
    const store = createMemoryTapeStore();
    const settings = defaultModelSettings({ model: "fake:model-a", api_base: server.url, api_key: "sk-test" });
    const agent = new Agent({ framework, settings: () => settings, tools: createToolRegistry([noteTool]), client: { env: {}, sleep: async () => undefined } });
    const requests: { modelCallId?: string; seen: string | undefined }[] = [];
    await framework.registerPlugin(
      basePlugin(store, {
        runModelStream: ({ prompt, sessionId, state }) => agent.runStream(sessionId, prompt, state),
        beforeLlmCall: ({ request }) => void requests.push({ modelCallId: request.modelCallId, seen: currentCorrelation()?.modelCallId }),
      }),
      "base",
    );
    const turn = (content: string) => framework.running(() => framework.processInbound({ channel: "test", chat_id: "1", session_id: "test:1", content }));
    const entries = async (): Promise<TapeEntry[]> => {
      const [tape] = await store.listTapes();
      return store.fetchAll({ tape: tape! });
    };
    return { framework, agent, store, turn, entries, requests };
  }

  it("stamps a tool-call turn: turn_id everywhere, model_call_id per step, tool_call_id on what the tool wrote", async () => {
    const h = await harness();
    server.script(reply.toolCalls([{ id: "call_a", name: "note_write", arguments: '{"text":"milk"}' }]), reply.text("Noted."));
    const result = await h.turn("remember milk");
    const turnId = result.state.turn_id;
    assert.match(String(turnId), UUID_V7);
    const entries = await h.entries();
    assert.ok(entries.length > 10);
    for (const entry of entries) assert.equal(entry.meta.turn_id, turnId, `${entry.kind} ${JSON.stringify(entry.payload).slice(0, 60)} has the turn id`);

    // One model_call_id per step, the same on every entry of that step (and its run_id).
    const stepped = entries.filter((entry) => entry.meta.run_id !== undefined);
    const byRun = new Map<unknown, Set<unknown>>();
    for (const entry of stepped) byRun.set(entry.meta.run_id, (byRun.get(entry.meta.run_id) ?? new Set()).add(entry.meta.model_call_id));
    assert.equal(byRun.size, 2, "two steps");
    const callIds = [...byRun.values()].map((ids) => [...ids]);
    for (const ids of callIds) {
      assert.equal(ids.length, 1);
      assert.match(String(ids[0]), UUID_V7);
    }
    assert.notEqual(callIds[0]![0], callIds[1]![0]);
    assert.deepEqual(h.requests.map((request) => request.modelCallId), callIds.map((ids) => ids[0]), "beforeLlmCall sees the same ids");
    assert.deepEqual(h.requests.map((request) => request.seen), callIds.map((ids) => ids[0]), "…and so does currentCorrelation() in the hook");

    // The step's tool_call and tool_result name the call; what the tool wrote carries it.
    const call = entries.find((entry) => entry.kind === "tool_call")!;
    const toolResult = entries.find((entry) => entry.kind === "tool_result")!;
    assert.deepEqual(call.meta.tool_call_ids, ["call_a"]);
    assert.deepEqual(toolResult.meta.tool_call_ids, ["call_a"]);
    assert.equal(call.meta.tool_call_id, undefined, "the step's own entries are not inside the tool call");
    const note = entries.find((entry) => entry.kind === "event" && entry.payload.name === "note")!;
    assert.deepEqual(note.payload.data, { text: "milk", seen: "call_a" });
    assert.equal(note.meta.tool_call_id, "call_a");
    assert.equal(note.meta.model_call_id, call.meta.model_call_id);

    // Loop events belong to the turn only.
    const loopStart = entries.find((entry) => entry.kind === "event" && entry.payload.name === "loop.start")!;
    assert.deepEqual(Object.keys(loopStart.meta), ["turn_id"]);
  });

  it("gives every turn its own id", async () => {
    const h = await harness();
    server.script(reply.text("one"), reply.text("two"));
    const first = await h.turn("first");
    const second = await h.turn("second");
    assert.notEqual(first.state.turn_id, second.state.turn_id);
    const ids = new Set((await h.entries()).map((entry) => entry.meta.turn_id));
    assert.deepEqual(ids, new Set([first.state.turn_id, second.state.turn_id]));
  });

  it("starts a turn id when the agent runs without the framework's turn, and puts it on the state", async () => {
    const h = await harness();
    server.script(reply.text("hi"));
    const state: Record<string, unknown> = { _runtime_workspace: "/tmp" };
    await h.framework.running(async () => {
      for await (const _event of await h.agent.runStream("test:1", "hello", state)) void _event;
    });
    assert.match(String(state.turn_id), UUID_V7);
    for (const entry of await h.entries()) assert.equal(entry.meta.turn_id, state.turn_id);
  });

  it("names the turn in the builtin plugin's log line of a failed model call", async () => {
    const dir = await tempDir();
    try {
      const home = join(dir.path, ".bub");
      const framework = await createBub({ workspace: dir.path, home, env: { BUB_MODEL: "fake:any", BUB_API_BASE: server.url, BUB_API_KEY: "sk-test", BUB_HOME: home } });
      server.script(reply.error(401, "Incorrect API key provided"));
      logs.length = 0;
      const result = await framework.running(() => framework.processInbound({ channel: "cli", chat_id: "local", session_id: "cli:local", content: "hi" }));
      const line = logs.find((record) => record.message.startsWith("turn.error"));
      assert.equal(line?.message, `turn.error stage=run_model session_id=cli:local turn_id=${result.state.turn_id}`);
    } finally {
      await dir.cleanup();
    }
  });

  it("names the turn in the log line of a failed turn", async () => {
    const h = await harness();
    await h.framework.registerPlugin({ name: "broken", buildPrompt: () => { throw new Error("no prompt today"); } }, "broken");
    logs.length = 0;
    await assert.rejects(h.turn("hi"), /no prompt today/);
    const failed = logs.find((record) => record.message.startsWith("turn.failed"));
    assert.match(failed?.message ?? "", /^turn\.failed session_id=test:1 turn_id=[0-9a-f-]{36}$/);
  });
});
