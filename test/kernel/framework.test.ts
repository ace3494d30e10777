import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { BubFramework } from "../../src/kernel/framework.ts";
import { AsyncStreamEvents } from "../../src/kernel/stream.ts";
import type { TapeStore } from "../../src/kernel/tape-contract.ts";
import { envelopeToJson, toEnvelope } from "../../src/kernel/envelope.ts";
import type { BubPlugin } from "../../src/kernel/hooks.ts";
import type { SteeringInbox } from "../../src/kernel/types.ts";
import { captureLogs, tempDir } from "../support/temp.ts";
import { kernelFramework } from "../support/framework.ts";

/** The keys this file's plugins keep on the state. */
declare module "../../src/kernel/types.ts" {
  interface TurnState {
    shared?: string;
    low?: number;
    high?: number;
  }
}

function framework(...plugins: BubPlugin[]): BubFramework {
  const bub = kernelFramework();
  plugins.forEach((plugin, index) => bub.runtime.register(plugin, plugin.name ?? `p${index}`));
  return bub;
}

const echoModel: BubPlugin = { name: "model", runModel: ({ prompt }) => `echo:${String(prompt)}` };

describe("processInbound", () => {
  it("falls back to the message's sessionId, then channel:chatId, and records it on the envelope", async () => {
    const bub = framework(echoModel);
    const inbound = toEnvelope({ channel: "tg", chat_id: "7", content: "hi" });
    const result = await bub.processInbound(inbound);
    assert.equal(result.sessionId, "tg:7");
    assert.equal(inbound.sessionId, "tg:7");
    assert.equal((await bub.processInbound({ channel: "tg", chat_id: "8", content: "hi" })).sessionId, "tg:8");
    assert.equal((await bub.processInbound({ session_id: "own", content: "x" })).sessionId, "own");
    assert.equal((await bub.processInbound({ sessionId: "camel", content: "x" })).sessionId, "camel");
    assert.equal((await bub.processInbound({ content: "x" })).sessionId, "default:default");
    assert.equal((await bub.processInbound("plain text")).sessionId, "default:default");
  });

  it("runs a frozen envelope on a copy that carries the resolved session", async () => {
    const bub = framework(echoModel);
    const frozen = Object.freeze(toEnvelope({ channel: "tg", chat_id: "9", content: "hi" }));
    const result = await bub.processInbound(frozen);
    assert.equal(result.sessionId, "tg:9");
    assert.equal(result.outbounds[0]?.sessionId, "tg:9");
    assert.equal(frozen.sessionId, undefined);
  });

  it("merges loadState results lowest precedence first, so higher precedence wins", async () => {
    const bub = framework(
      { name: "low", loadState: () => ({ shared: "low", low: 1 }) },
      { name: "mid", loadState: () => null },
      { name: "high", loadState: async () => ({ shared: "high", high: 2 }) },
      echoModel,
    );
    const { state, context } = await bub.processInbound({ content: "x" });
    assert.equal(state.shared, "high");
    assert.equal(state.low, 1);
    assert.equal(state.high, 2);
    assert.equal(context.workspace, "/tmp");
    assert.equal(context.steering, null);
    assert.equal(context.sessionId, "default:default");
    assert.equal(context.turnId, state.turn_id);
  });

  it("hands every turn hook the same typed context, and keeps the _runtime_* keys readable but out of the state's keys", async () => {
    const seen: unknown[] = [];
    let compat: unknown[] = [];
    const bub = framework(
      { name: "load", loadState: ({ context }) => void seen.push(context) },
      { name: "prompt", buildPrompt: ({ context, state }) => void (seen.push(context), (compat = [state._runtime_workspace, state._runtime_thread_id, state._runtime_steering_inbox])) },
      { name: "model", runModel: ({ prompt, context }) => (seen.push(context), `echo:${String(prompt)}`) },
      { name: "save", saveState: ({ context }) => void seen.push(context) },
      { name: "render", renderOutbound: ({ context }) => void seen.push(context) },
      { name: "dispatch", dispatchOutbound: ({ context }) => void seen.push(context) },
    );
    const { state, context } = await bub.processInbound({ channel: "tg", chat_id: "7", content: "x", context: { thread_id: 42 } });
    assert.equal(seen.length, 6);
    for (const each of seen) assert.equal(each, context);
    assert.deepEqual([context.sessionId, context.threadId, context.workspace, context.commandFailed], ["tg:7", "42", "/tmp", false]);
    assert.deepEqual(compat, ["/tmp", "42", null]);
    assert.equal(state._runtime_workspace, "/tmp");
    assert.deepEqual(Object.keys(state), ["turn_id"]);
    assert.deepEqual(JSON.parse(JSON.stringify(state)), { turn_id: context.turnId });
  });

  it("uses the message content when buildPrompt answers with something empty", async () => {
    const bub = framework({ name: "empty", buildPrompt: () => "" }, echoModel);
    const result = await bub.processInbound({ content: "hello" });
    assert.equal(result.prompt, "hello");
    assert.equal(result.modelOutput, "echo:hello");
  });

  it("echoes the prompt and notifies onError(run_model) when no model answers", async () => {
    const errors: string[] = [];
    const bub = framework({ name: "obs", onError: ({ stage, error }) => void errors.push(`${stage}:${(error as Error).message}`) });
    const result = await bub.processInbound({ content: "ping" });
    assert.equal(result.modelOutput, "ping");
    assert.deepEqual(errors, ["run_model:no model skill returned output"]);
  });

  it("runs saveState even when the model throws, then notifies onError(turn) and rethrows", async () => {
    const saved: unknown[] = [];
    const stages: string[] = [];
    const bub = framework(
      { name: "save", saveState: ({ modelOutput, error }) => void saved.push({ modelOutput, error: (error as Error)?.message }) },
      { name: "obs", onError: ({ stage }) => void stages.push(stage) },
      { name: "model", runModel: () => { throw new Error("model down"); } },
    );
    await captureLogs(() => assert.rejects(bub.processInbound({ content: "x" }), /model down/));
    assert.deepEqual(saved, [{ modelOutput: "", error: "plugin 'model' failed in runModel: model down — fix the plugin or take it out (`bub hooks` shows where each plugin comes from)" }]);
    assert.deepEqual(stages, ["turn"]);
  });

  it("collects rendered outbounds and dispatches each one", async () => {
    const dispatched: unknown[] = [];
    const bub = framework(
      { name: "render1", renderOutbound: () => [{ content: "a" }, { content: "b" }] },
      { name: "render2", renderOutbound: () => ({ content: "c" }) },
      { name: "render3", renderOutbound: () => null },
      { name: "dispatch", dispatchOutbound: ({ message }) => void dispatched.push(message) },
      echoModel,
    );
    const result = await bub.processInbound({ content: "x" });
    assert.deepEqual(result.outbounds, [toEnvelope({ content: "c" }), toEnvelope({ content: "a" }), toEnvelope({ content: "b" })]);
    assert.deepEqual(dispatched, result.outbounds);
  });

  it("builds one fallback outbound when nothing renders", async () => {
    const bub = framework(echoModel);
    const result = await bub.processInbound({ channel: "cli", chat_id: "local", content: "x" });
    assert.deepEqual(result.outbounds, [{ content: "echo:x", sessionId: "cli:local", channel: "cli", chatId: "local", kind: "normal", media: [], context: {} }]);
    assert.deepEqual(envelopeToJson(result.outbounds[0]!), { content: "echo:x", session_id: "cli:local", channel: "cli", chat_id: "local", kind: "normal", context: {} });
  });

  it("keeps where a channel saw the session tape end on the envelope, and leaves it out of the wire form", () => {
    const tapeEnd = { tape: "ws__s", id: 3, date: "2026-12-02T00:00:00.000+00:00" };
    const envelope = toEnvelope({ content: "x", tapeEnd });
    assert.deepEqual(envelope.tapeEnd, tapeEnd);
    assert.equal(toEnvelope({ content: "x", tapeEnd: { tape: "ws__s", id: "3" } }).tapeEnd, undefined, "not a tape end: dropped");
    assert.deepEqual(envelopeToJson(envelope), { content: "x", channel: "", chat_id: "", kind: "normal", context: {} });
  });

  it("streams: joins text deltas, reports error events to onError, and lets a bound router wrap the stream", async () => {
    const errors: unknown[] = [];
    const bub = framework(
      { name: "obs", onError: ({ stage, error }) => void errors.push([stage, String(error)]) },
      {
        name: "model",
        runModelStream: () =>
          AsyncStreamEvents.of([
            { kind: "text", data: { delta: "a" } },
            { kind: "error", data: { kind: "tool", message: "bad tool" } },
            { kind: "text", data: { delta: "b" } },
          ]),
      },
    );
    const wrapped: string[] = [];
    // A channel shows the stream by wrapping the model hook's answer in its own runModelStream.
    bub.runtime.register(
      {
        name: "channel",
        async runModelStream(_args, next) {
          const stream = await next();
          if (!stream) return stream;
          async function* spy(source: AsyncStreamEvents) {
            for await (const event of source) {
              wrapped.push(event.kind);
              yield event;
            }
          }
          return new AsyncStreamEvents(spy(stream), stream.state);
        },
      },
      "channel",
    );
    const result = await bub.processInbound({ content: "x" });
    assert.equal(result.modelOutput, "ab");
    assert.deepEqual(errors, [["run_model", "[tool] bad tool"]]);
    assert.deepEqual(wrapped, ["text", "error", "text"]);
  });

  it("echo-falls back on the streaming path too", async () => {
    const bub = framework({ name: "m", runModelStream: () => null });
    bub.runtime.register({ name: "channel", runModelStream: (_args, next) => next() }, "channel");
    const result = await bub.processInbound({ content: "same" });
    assert.equal(result.modelOutput, "same");
  });
});

describe("running()", () => {
  const store: TapeStore = { listTapes: async () => [], fetchAll: async () => [], append: async (_t, e) => ({ ...e, id: 1 }), reset: async () => {} };

  it("enters generator providers once and runs their cleanup at scope exit, in reverse order", async () => {
    const events: string[] = [];
    const inbox: SteeringInbox = { enqueueMessage: () => {}, drainMessages: () => [], messageCount: () => 0 };
    const bub = framework({
      name: "providers",
      provideTapeStore: function* () {
        events.push("store:enter");
        yield store;
        events.push("store:exit");
      },
      provideSteeringInbox: async function* () {
        events.push("inbox:enter");
        yield inbox;
        events.push("inbox:exit");
      } as unknown as BubPlugin["provideSteeringInbox"],
    });
    await captureLogs(async () => {
      // An async generator is a promise-free object, so it passes the sync-only check.
      const seen = await bub.running(async (scope) => {
        assert.equal(bub.tapeStore, store);
        return scope.steeringInbox;
      });
      assert.equal(seen, inbox);
    });
    assert.deepEqual(events, ["store:enter", "inbox:enter", "inbox:exit", "store:exit"]);
    assert.equal(bub.tapeStore, null);
  });

  it("disposes async-disposable providers and throws the body's error into generators", async () => {
    const events: string[] = [];
    const bub = framework({
      name: "providers",
      provideTapeStore: () => ({ ...store, [Symbol.asyncDispose]: async () => void events.push("disposed") }),
      provideSteeringInbox: function* () {
        try {
          yield { enqueueMessage: () => {}, drainMessages: () => [], messageCount: () => 0 };
        } catch (error) {
          events.push(`inbox saw ${(error as Error).message}`);
          throw error;
        }
      },
    });
    await assert.rejects(bub.running(async () => { throw new Error("body failed"); }), /body failed/);
    assert.deepEqual(events, ["inbox saw body failed", "disposed"]);
  });

  it("hands the scope's steering inbox to each turn's context (and its state's compat view)", async () => {
    const inbox: SteeringInbox = { enqueueMessage: () => {}, drainMessages: () => [], messageCount: () => 0 };
    const bub = framework({ name: "p", provideSteeringInbox: () => inbox }, echoModel);
    const { state, context } = await bub.running(async () => await bub.processInbound({ content: "x" }));
    assert.equal(context.steering, inbox);
    assert.equal(state._runtime_steering_inbox, inbox);
  });
});

describe("framework helpers", () => {
  it("type-checks admitMessage answers", async () => {
    const turn = { sessionId: "s", isRunning: false, runningCount: 0, pendingCount: 0, steeringCount: 0 };
    assert.deepEqual(await framework({ name: "good", admitMessage: () => ({ action: "follow_up" }) }).admitMessage("s", toEnvelope({}), turn), { action: "follow_up" });
    const bad = framework({ name: "bad", admitMessage: () => ({ action: "wait" }) as never });
    await assert.rejects(bad.admitMessage("s", toEnvelope({}), turn), { message: "hook.admitMessage must return AdmitDecision or null" });
    assert.equal(await framework().admitMessage("s", toEnvelope({}), turn), null);
  });

  it("resolves sessions and admission from sync and async hooks, highest precedence first", async () => {
    const turn = { sessionId: "s", isRunning: false, runningCount: 0, pendingCount: 0, steeringCount: 0 };
    const bub = framework();
    assert.equal(await bub.resolveSession(toEnvelope({ channel: "tg", chat_id: "7" })), "tg:7");
    assert.equal(await bub.resolveSession(toEnvelope({ channel: "tg", chat_id: "7", session_id: "own" })), "own");
    assert.equal(await bub.admitMessage("s", toEnvelope({}), turn), null);
    bub.runtime.register({ resolveSession: () => "named", admitMessage: () => ({ action: "follow_up" }) }, "sync");
    assert.equal(await bub.resolveSession(toEnvelope({})), "named");
    assert.deepEqual(await bub.admitMessage("s", toEnvelope({}), turn), { action: "follow_up" });
    bub.runtime.register({ resolveSession: async () => "later", admitMessage: async () => ({ action: "steer" }) }, "async");
    assert.equal(await bub.resolveSession(toEnvelope({})), "later");
    assert.deepEqual(await bub.admitMessage("s", toEnvelope({}), turn), { action: "steer" });
    bub.runtime.register({ resolveSession: async () => null, admitMessage: () => null }, "silent");
    assert.equal(await bub.resolveSession(toEnvelope({})), "later", "no answer lets the next plugin answer");
    assert.deepEqual(await bub.admitMessage("s", toEnvelope({}), turn), { action: "steer" });
    const bad = framework({ name: "bad", admitMessage: () => ({ action: "maybe" }) as never });
    await assert.rejects(bad.admitMessage("s", toEnvelope({}), turn), TypeError);
  });

  it("keeps no router: outbounds and quits reach the plugins that implement them, and nothing without one", async () => {
    const bub = framework();
    assert.equal("bindChannelRouter" in bub || "dispatchViaChannelRouter" in bub || "router" in bub, false);
    assert.deepEqual(await bub.runtime.call("dispatchOutbound", { message: toEnvelope({}) }), []);
    await bub.runtime.call("quitSession", { sessionId: "s" });
    const quits: string[] = [];
    const sent: string[] = [];
    bub.runtime.register({ name: "channel", dispatchOutbound: ({ message }) => (sent.push(message.content), true), quitSession: ({ sessionId }) => void quits.push(sessionId) }, "channel");
    assert.deepEqual(await bub.runtime.call("dispatchOutbound", { message: toEnvelope({ content: "hi" }) }), []);
    bub.runtime.register({ name: "broken", dispatchOutbound: () => { throw new Error("no route"); } }, "broken");
    const errors = await bub.runtime.call("dispatchOutbound", { message: toEnvelope({ content: "again" }) });
    assert.match(String(errors[0]), /no route/);
    await bub.runtime.call("quitSession", { sessionId: "s" });
    assert.deepEqual([sent, quits], [["hi", "again"], ["s"]]);
  });
});
