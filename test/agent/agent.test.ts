import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { z } from "zod";
import { Agent, AUTO_HANDOFF_ANCHOR } from "../../src/agent/agent.ts";
import { BubFramework } from "../../src/kernel/framework.ts";
import { deny, finish } from "../../src/kernel/interception.ts";
import { TurnInterrupted } from "../../src/agent/interrupt.ts";
import type { StreamEvent } from "../../src/kernel/stream.ts";
import type { TapeEntry } from "../../src/kernel/tape-contract.ts";
import { toEnvelope, type Envelope } from "../../src/kernel/envelope.ts";
import type { SteeringInbox, TurnState } from "../../src/kernel/types.ts";
import { defaultModelSettings, type ModelSettings } from "../../src/llm/settings.ts";
import { createMemoryTapeStore } from "../../src/tape/memory-store.ts";
import { createToolRegistry, type ToolRegistry } from "../../src/tools/registry.ts";
import { defineTool } from "../../src/tools/tool.ts";
import { reply } from "../support/fake-openai.ts";
import { useFakeOpenAI } from "../support/fake-openai-suite.ts";
import { basePlugin, kernelFramework } from "../support/framework.ts";

const echoTool = defineTool({
  name: "text.echo",
  description: "Echo the text back",
  parameters: z.object({ text: z.string() }),
  run: ({ text }) => `echo: ${text}`,
});

/** A steering inbox over a plain array, keyed by nothing (one session per test). */
function arrayInbox(): SteeringInbox & { queue: Envelope[] } {
  const queue: Envelope[] = [];
  return {
    queue,
    enqueueMessage: (message) => void queue.push(message),
    drainMessages: () => queue.splice(0),
    messageCount: () => queue.length,
  };
}

describe("the builtin agent loop (against a fake OpenAI server)", () => {
  const server = useFakeOpenAI();

  interface Harness {
    agent: Agent;
    framework: BubFramework;
    store: ReturnType<typeof createMemoryTapeStore>;
    tools: ToolRegistry;
    /** Runs a prompt inside a running() scope and collects its events. */
    run(prompt: string, state?: TurnState, sessionId?: string, steering?: SteeringInbox): Promise<StreamEvent[]>;
    /** Every entry of the session's tape. */
    entries(sessionId?: string): Promise<TapeEntry[]>;
  }

  async function harness(settings: Partial<ModelSettings> = {}, plugins: Parameters<BubFramework["registerPlugin"]>[0][] = []): Promise<Harness> {
    const framework = kernelFramework({ workspace: "/tmp", home: "/tmp/bub-agent-test" });
    const store = createMemoryTapeStore();
    await framework.registerPlugin(basePlugin(store), "base");
    for (const plugin of plugins) await framework.registerPlugin(plugin);
    const tools = createToolRegistry([echoTool]);
    const modelSettings = defaultModelSettings({ model: "fake:model-a", api_base: server.url, api_key: "sk-test", ...settings });
    const agent = new Agent({ framework, settings: () => modelSettings, tools, client: { env: {}, sleep: async () => undefined } });
    return {
      agent,
      framework,
      store,
      tools,
      run: (prompt, state = {}, sessionId = "test:1", steering) =>
        framework.running(async () => {
          const events: StreamEvent[] = [];
          const context = { ...framework.turnContext({ turnId: "turn-test", sessionId, signal: new AbortController().signal }), ...(steering ? { steering } : {}) };
          for await (const event of await agent.runStream(sessionId, prompt, state, { context })) events.push(event);
          return events;
        }),
      entries: async (sessionId = "test:1") => {
        const [name] = (await store.listTapes()).filter((tape) => tape.endsWith(agent.sessionTape(sessionId, "/tmp", {}).name.slice(-16)));
        return name ? store.fetchAll({ tape: name }) : [];
      },
    };
  }

  const textOf = (events: StreamEvent[]) => events.flatMap((event) => (event.kind === "text" ? [event.data.delta] : [])).join("");
  const eventNames = (entries: TapeEntry[]) => entries.filter((entry) => entry.kind === "event").map((entry) => `${entry.payload.name}${(entry.payload.data as { status?: string })?.status ? `:${(entry.payload.data as { status: string }).status}` : ""}`);

  it("answers a plain prompt and records the loop and the step on the session tape", async () => {
    const h = await harness();
    server.script(reply.text("Hello there.", { usage: { prompt_tokens: 10, completion_tokens: 3 } }));
    const events = await h.run("hi");
    assert.equal(textOf(events), "Hello there.");
    assert.deepEqual(events.at(-1), { kind: "final", data: { ok: true, text: "Hello there." } });
    const entries = await h.entries();
    assert.deepEqual(
      entries.map((entry) => entry.kind),
      ["anchor", "event", "event", "event", "system", "message", "message", "event", "event"],
    );
    assert.deepEqual(eventNames(entries), ["handoff", "loop.start", "loop.step.start", "run:ok", "loop.step:ok"]);
    const runId = entries.find((entry) => entry.kind === "system")!.meta.run_id;
    assert.ok(typeof runId === "string" && runId.startsWith("run-"));
    assert.deepEqual(entries.filter((entry) => entry.kind === "message").map((entry) => entry.payload), [
      { role: "user", content: "hi" },
      { role: "assistant", content: "Hello there." },
    ]);
    const sent = server.requests[0]!.body.messages;
    assert.equal(sent[0]!.role, "system");
    assert.match(String(sent[0]!.content), /You are a test agent\.[\s\S]*<available_tools>\n- text_echo\(text\): Echo the text back\n<\/available_tools>/);
  });

  it("runs a tool call, records tool_call and tool_result with matching ids, and continues with the continue prompt", async () => {
    const h = await harness();
    server.script(reply.toolCalls([{ id: "call_1", name: "text_echo", arguments: '{"text":"ping"}' }]), reply.text("Done: ping."));
    const events = await h.run("echo ping");
    const kinds = events.map((event) => event.kind).filter((kind) => kind !== "usage");
    assert.deepEqual(kinds.slice(0, 3), ["tool_call", "tool_result", "final"]);
    assert.equal(kinds.at(-1), "final");
    const toolResult = events.find((event) => event.kind === "tool_result");
    assert.deepEqual(toolResult?.data, { tool_results: ["echo: ping"] });
    assert.equal(textOf(events), "Done: ping.");
    const entries = await h.entries();
    const call = entries.find((entry) => entry.kind === "tool_call")!;
    const result = entries.find((entry) => entry.kind === "tool_result")!;
    assert.equal((call.payload.calls as { id: string }[])[0]!.id, "call_1");
    assert.deepEqual(result.payload.results, ["echo: ping"]);
    assert.ok(call.id < result.id);
    assert.deepEqual(eventNames(entries).filter((name) => name.startsWith("loop.step:")), ["loop.step:continue", "loop.step:ok"]);
    const second = server.requests[1]!.body.messages;
    assert.deepEqual(second.at(-1), { role: "user", content: "continue" });
    assert.ok(second.some((message) => message.role === "tool" && message.tool_call_id === "call_1" && message.content === "echo: ping"));
  });

  it("writes the system prompt only when it changes, with its hash on every run event", async () => {
    const h = await harness();
    server.script(reply.text("one"), reply.text("two"));
    await h.run("first");
    await h.run("second");
    const entries = await h.entries();
    assert.equal(entries.filter((entry) => entry.kind === "system").length, 1);
    const hashes = entries.filter((entry) => entry.kind === "event" && entry.payload.name === "run").map((entry) => (entry.payload.data as { system_hash?: string }).system_hash);
    assert.equal(hashes.length, 2);
    assert.ok(hashes[0] && hashes[0] === hashes[1]);
  });

  it("joins the text of separate steps with a blank line", async () => {
    const h = await harness();
    server.script(reply.toolCalls([{ name: "text_echo", arguments: '{"text":"a"}' }], { text: "Looking." }), reply.text("Found it."));
    const events = await h.run("go");
    assert.equal(textOf(events), "Looking.\n\nFound it.");
  });

  it("hands off once and retries the original prompt when the context overflows", async () => {
    const h = await harness();
    server.script(reply.contextLength(), reply.text("fits now"));
    const events = await h.run("big question");
    assert.equal(textOf(events), "fits now");
    assert.ok(!events.some((event) => event.kind === "error"), "the recovered failure is not reported");
    const entries = await h.entries();
    const anchors = entries.filter((entry) => entry.kind === "anchor").map((entry) => entry.payload.name);
    assert.deepEqual(anchors, ["session/start", AUTO_HANDOFF_ANCHOR]);
    assert.deepEqual(eventNames(entries).filter((name) => name.startsWith("loop.step:")), ["loop.step:auto_handoff", "loop.step:ok"]);
    assert.deepEqual(server.requests[1]!.body.messages.at(-1), { role: "user", content: "big question" });
  });

  it("does not hand off twice: a second overflow ends the turn with an error", async () => {
    const h = await harness();
    server.script(reply.contextLength(), reply.contextLength());
    const events = await h.run("huge");
    const error = events.find((event) => event.kind === "error");
    assert.match(String(error?.data.message), /^The prompt does not fit the context window of fake:model-a, even after the automatic handoff/);
    assert.match(String((error?.data.details as { provider_message?: string } | undefined)?.provider_message), /maximum context length/);
    assert.equal(events.filter((event) => event.kind === "error").length, 1, "one error: the clear one");
    assert.deepEqual(events.at(-1), { kind: "final", data: { ok: false } });
    const entries = await h.entries();
    assert.equal(entries.filter((entry) => entry.kind === "anchor" && entry.payload.name === AUTO_HANDOFF_ANCHOR).length, 1);
    assert.deepEqual(eventNames(entries).filter((name) => name.startsWith("loop.step:")), ["loop.step:auto_handoff", "loop.step:error"]);
  });

  it("ends with an error event and an error entry on a 401, and keeps the tape consistent", async () => {
    const h = await harness();
    server.script(reply.error(401, "Incorrect API key provided: sk-test."));
    const events = await h.run("hi");
    assert.ok(events.some((event) => event.kind === "error"));
    const entries = await h.entries();
    assert.ok(entries.some((entry) => entry.kind === "error"));
    const runEvent = entries.find((entry) => entry.kind === "event" && entry.payload.name === "run");
    assert.equal((runEvent?.payload.data as { status: string }).status, "error");
    assert.ok(!JSON.stringify(entries).includes("sk-test\""), "the key itself never reaches the tape as a value");
  });

  it("reports an empty reply as an error instead of answering nothing", async () => {
    const h = await harness();
    server.script(reply.text(""));
    const events = await h.run("hi");
    assert.match(String(events.find((event) => event.kind === "error")?.data.message), /returned an empty reply/);
    assert.ok((await h.entries()).some((entry) => entry.kind === "error"));
  });

  it("falls back to the next model when the first fails", async () => {
    const h = await harness({ fallback_models: ["fake:model-b"] });
    server.script(reply.error(500, "boom"), reply.error(500, "boom"), reply.error(500, "boom"), reply.text("from b"));
    const events = await h.run("hi");
    assert.equal(textOf(events), "from b");
    assert.equal(server.requests.at(-1)!.body.model, "model-b");
    const run = (await h.entries()).find((entry) => entry.kind === "event" && entry.payload.name === "run");
    assert.equal((run?.payload.data as { model: string }).model, "fake:model-b");
  });

  it("stops after max_steps with a clear error", async () => {
    const h = await harness({ max_steps: 2 });
    server.script(reply.toolCalls([{ name: "text_echo", arguments: '{"text":"1"}' }]), reply.toolCalls([{ name: "text_echo", arguments: '{"text":"2"}' }]));
    const events = await h.run("loop forever");
    const error = events.find((event) => event.kind === "error");
    assert.match(String(error?.data.message), /max_steps_reached=2/);
    assert.equal(server.requests.length, 2);
  });

  it("stops a model that calls tools forever after the default 100 steps", async () => {
    const h = await harness();
    assert.equal(defaultModelSettings().max_steps, 100);
    // A model that keeps calling tools: a 101st request would get the fake server's HTTP 500
    // ("no scripted reply") instead of the step limit's message.
    for (let index = 0; index < 100; index++) server.script(reply.toolCalls([{ name: "text_echo", arguments: `{"text":"${index}"}` }]));
    const events = await h.run("loop forever");
    const error = events.find((event) => event.kind === "error");
    assert.match(String(error?.data.message), /^max_steps_reached=100: the agent stopped after 100 steps\. Raise BUB_MAX_STEPS/);
    assert.deepEqual(events.at(-1), { kind: "final", data: { ok: false } });
    assert.equal(server.requests.length, 100);
  });

  it("injects steering messages once, before the prompt, and continues while they wait", async () => {
    const inbox = arrayInbox();
    const h = await harness();
    inbox.queue.push(toEnvelope({ content: "also check the tests", session_id: "test:1" }));
    server.script(
      (request) => {
        // A message steered in while the first step runs keeps the loop going.
        inbox.queue.push(toEnvelope({ content: "and the docs", session_id: "test:1" }));
        assert.deepEqual(request.body.messages.slice(-2).map((message) => message.content), ["also check the tests", "do it"]);
        return reply.text("first");
      },
      reply.text("second"),
    );
    const events = await h.run("do it", {}, "test:1", inbox);
    assert.equal(textOf(events), "first\n\nsecond");
    const second = server.requests[1]!.body.messages;
    assert.deepEqual(second.slice(-2).map((message) => message.content), ["and the docs", "continue"]);
    assert.equal(second.filter((message) => message.content === "also check the tests").length, 1, "sent once, then read from the tape");
    assert.equal(inbox.queue.length, 0);
  });

  it("answers an empty prompt with an error and leaves the tape untouched", async () => {
    const h = await harness();
    const events = await h.run("");
    assert.deepEqual(events, [
      { kind: "text", data: { delta: "error: empty prompt" } },
      { kind: "final", data: { ok: false, text: "error: empty prompt" } },
    ]);
    assert.deepEqual(await h.store.listTapes(), []);
  });

  it("keeps the turn on a fork until the stream is consumed, and discards temp/ sessions", async () => {
    const h = await harness();
    server.script(reply.text("kept"), reply.text("dropped"));
    await h.framework.running(async () => {
      const stream = await h.agent.runStream("test:fork", "hi", {});
      const iterator = stream[Symbol.asyncIterator]();
      await iterator.next();
      assert.deepEqual(await h.store.listTapes(), [], "nothing reaches the store mid-turn");
      while (!(await iterator.next()).done);
    });
    assert.equal((await h.entries("test:fork")).filter((entry) => entry.kind === "message").length, 2);
    await h.run("hi", {}, "temp/abc");
    assert.deepEqual(await h.entries("temp/abc"), []);
  });

  it("writes one session/start anchor when several first turns of a session run at once", async () => {
    const h = await harness();
    server.script(reply.text("one"), reply.text("two"), reply.text("three"));
    await Promise.all(["a", "b", "c"].map((prompt) => h.run(prompt, {}, "test:concurrent")));
    const entries = await h.entries("test:concurrent");
    assert.deepEqual(entries.filter((entry) => entry.kind === "anchor").map((entry) => entry.payload.name), ["session/start"]);
    assert.equal(entries.filter((entry) => entry.kind === "message" && entry.payload.role === "assistant").length, 3);
  });

  it("lets beforeLlmCall finish a step and beforeToolCall deny a tool", async () => {
    const h = await harness({}, [
      {
        name: "guard",
        beforeLlmCall: ({ request }) => (request.messages.at(-1)?.content === "cached?" ? finish("from cache") : null),
        beforeToolCall: ({ call }) => (call.tool === "text_echo" ? deny("echo is not allowed here") : null),
      },
    ]);
    assert.equal(textOf(await h.run("cached?")), "from cache");
    assert.equal(server.requests.length, 0);
    server.script(reply.toolCalls([{ name: "text_echo", arguments: '{"text":"x"}' }]), reply.text("ok"));
    const events = await h.run("echo x");
    const results = events.find((event) => event.kind === "tool_result")?.data as { tool_results: { message: string }[] };
    assert.equal(results.tool_results[0]!.message, "echo is not allowed here");
  });

  it("stops a hanging model call when the turn's signal aborts, keeping what was recorded plus the prompt and an interrupted event", async () => {
    const h = await harness();
    server.script(reply.hang());
    const controller = new AbortController();
    const failure = h.framework.running(async () => {
      const stream = await h.agent.runStream("test:1", "wait", {}, { signal: controller.signal });
      for await (const _event of stream);
    });
    await server.waitForRequest(0);
    controller.abort(new TurnInterrupted("SIGINT"));
    await assert.rejects(failure, /interrupted \(SIGINT\)/);
    const entries = await h.entries();
    assert.deepEqual(eventNames(entries), ["handoff", "loop.start", "loop.step.start", "interrupted"]);
    assert.deepEqual(
      entries.filter((entry) => entry.kind === "message").map((entry) => entry.payload),
      [{ role: "user", content: "wait" }],
    );
    const interrupted = entries.find((entry) => entry.kind === "event" && entry.payload.name === "interrupted")!;
    assert.deepEqual({ ...(interrupted.payload.data as object), date: "-" }, { signal: "SIGINT", reason: "interrupted (SIGINT)", date: "-" });
  });

  it("writes a prompt the recorded step already holds only once when interrupted in a later step", async () => {
    const h = await harness();
    server.script(reply.toolCalls([{ id: "c1", name: "text_echo", arguments: '{"text":"x"}' }]), reply.hang());
    const controller = new AbortController();
    const failure = h.framework.running(async () => {
      const stream = await h.agent.runStream("test:1", "echo then wait", {}, { signal: controller.signal });
      for await (const _event of stream);
    });
    await server.waitForRequest(1);
    controller.abort(new Error("cancelled"));
    await assert.rejects(failure, /cancelled/);
    const entries = await h.entries();
    const users = entries.filter((entry) => entry.kind === "message" && entry.payload.role === "user").map((entry) => entry.payload.content);
    assert.equal(users.filter((content) => content === "echo then wait").length, 1);
    assert.equal(users.length, 2, "the first step's prompt and the continuation prompt of the interrupted step");
    const interrupted = entries.find((entry) => entry.kind === "event" && entry.payload.name === "interrupted")!;
    assert.equal((interrupted.payload.data as { signal: unknown }).signal, null);
  });

  it("turns malformed tool-call JSON into an invalid_input result the model sees", async () => {
    const h = await harness();
    server.script(reply.toolCalls([{ id: "c1", name: "text_echo", arguments: '{"text": ' }]), reply.text("retrying"));
    const events = await h.run("go");
    const results = events.find((event) => event.kind === "tool_result")?.data as { tool_results: { kind: string }[] };
    assert.equal(results.tool_results[0]!.kind, "invalid_input");
    assert.equal(textOf(events), "retrying");
  });
});
