import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ChannelManager, currentTurnSignal } from "../../src/channels/manager.ts";
import { ChannelMessage } from "../../src/channels/message.ts";
import { builtinAdmission } from "../../src/channels/admission.ts";
import { channelSettings } from "../../src/builtin/settings.ts";
import { AsyncStreamEvents, collectText } from "../../src/kernel/stream.ts";
import { contentOf } from "../../src/kernel/envelope.ts";
import type { BubFramework } from "../../src/kernel/framework.ts";
import type { BubPlugin } from "../../src/kernel/hooks.ts";
import { captureLogs } from "../support/temp.ts";
import { admissionPlugin, gatedModel, RecordingChannel, routerDispatch, steeringPlugin, testFramework } from "./support.ts";

function message(content: string, options: { chat?: string; channel?: string; thread?: string } = {}): ChannelMessage {
  const channel = options.channel ?? "test";
  const chatId = options.chat ?? "1";
  return new ChannelMessage({ sessionId: `${channel}:${chatId}`, channel, chatId, content, context: options.thread ? { thread_id: options.thread } : {} });
}

/** A manager over one recording channel, already running. */
/** A model answering "ok" after one microtask, recording each session's prompts in order. */
function instantModel(): { seen: Map<string, string[]>; model: BubPlugin } {
  const seen = new Map<string, string[]>();
  const model: BubPlugin = {
    name: "instant",
    runModel: async ({ prompt, sessionId }) => {
      const list = seen.get(sessionId) ?? [];
      list.push(String(prompt));
      seen.set(sessionId, list);
      await Promise.resolve();
      return "ok";
    },
  };
  return { seen, model };
}

async function running(plugins: BubPlugin[], options: { env?: NodeJS.ProcessEnv; graceSeconds?: number; channel?: RecordingChannel } = {}) {
  let bub!: BubFramework;
  bub = testFramework([routerDispatch(() => bub), ...plugins], options.env);
  const channel = options.channel ?? new RecordingChannel("test");
  const manager = new ChannelManager(bub, { channels: [channel], enabledChannels: [channel.name], graceSeconds: options.graceSeconds ?? 30 });
  const stop = new AbortController();
  const done = manager.run(stop.signal);
  await manager.ready();
  return { bub, manager, channel, stop, done };
}

describe("ChannelManager channel selection", () => {
  const channels = [
    new RecordingChannel("telegram"),
    new RecordingChannel("cli", { kind: "interface" }),
    new RecordingChannel("cron", { kind: "lifecycle" }),
    new RecordingChannel("off", { enabled: false }),
    new RecordingChannel("discord"),
  ];
  const names = (enabledChannels: string[] | null, env: NodeJS.ProcessEnv = {}) =>
    new ChannelManager(testFramework([], env), { channels, enabledChannels }).enabledChannels().map((channel) => channel.name);

  it("runs every enabled non-interface channel for 'all'", () => {
    assert.deepEqual(names(["all"]), ["telegram", "cron", "discord"]);
  });

  it("excludes channels named with '!'", () => {
    assert.deepEqual(names(["all", "!telegram", " !cron "]), ["discord"]);
  });

  it("adds lifecycle channels to a named selection of ordinary channels", () => {
    assert.deepEqual(names(["cli"]), ["cli", "cron"]);
    assert.deepEqual(names(["discord", "!cron"]), ["discord"]);
  });

  it("runs only lifecycle channels when only they are named, and never a disabled one", () => {
    assert.deepEqual(names(["cron"]), ["cron"]);
    assert.deepEqual(names(["off"]), []);
  });

  it("reads the enabled_channels setting when no list is given", async () => {
    const bub = testFramework([], { BUB_ENABLED_CHANNELS: "discord,!cron" });
    bub.settings.register(channelSettings);
    await bub.settings.prepare();
    assert.deepEqual(new ChannelManager(bub, { channels }).enabledChannels().map((channel) => channel.name), ["discord"]);
  });
});

describe("ChannelManager turns and admission", () => {
  it("runs messages of one session concurrently when nothing decides otherwise", async () => {
    const model = gatedModel();
    const { manager, stop, done, channel } = await running([model.plugin]);
    await manager.handleMessage(message("a"));
    await manager.handleMessage(message("b"));
    await model.callCount(2);
    assert.deepEqual(model.prompts(), ["a", "b"]);
    assert.equal(manager.snapshot("test:1").runningCount, 2);
    model.calls.forEach((call) => call.finish());
    await manager.idle();
    assert.deepEqual(channel.sent.map(contentOf).sort(), ["done:a", "done:b"]);
    stop.abort();
    await done;
  });

  it("drops a message when admission says drop", async () => {
    const model = gatedModel();
    const { manager, stop, done } = await running([model.plugin, admissionPlugin((content) => (content === "spam" ? { action: "drop" } : null))]);
    await manager.handleMessage(message("spam"));
    await manager.handleMessage(message("ham"));
    await model.callCount(1);
    model.calls[0]!.finish();
    await manager.idle();
    assert.deepEqual(model.prompts(), ["ham"]);
    stop.abort();
    await done;
  });

  it("runs follow-ups after the running turn, first in first out", async () => {
    const model = gatedModel();
    const { manager, stop, done } = await running([model.plugin, admissionPlugin(() => ({ action: "follow_up" }))]);
    for (const content of ["one", "two", "three"]) await manager.handleMessage(message(content));
    await model.callCount(1);
    assert.deepEqual(manager.snapshot("test:1"), { sessionId: "test:1", isRunning: true, runningCount: 1, pendingCount: 2, steeringCount: 0 });
    model.calls[0]!.finish();
    await model.callCount(2);
    assert.equal(model.calls.length, 2, "the third waits for the second");
    model.calls[1]!.finish();
    await model.callCount(3);
    model.calls[2]!.finish();
    await manager.idle();
    assert.deepEqual(model.prompts(), ["one", "two", "three"]);
    stop.abort();
    await done;
  });

  it("runs a follow-up at once when its session is idle, and other sessions in parallel", async () => {
    const model = gatedModel();
    const { manager, stop, done } = await running([model.plugin, admissionPlugin(() => ({ action: "follow_up" }))]);
    await manager.handleMessage(message("a", { chat: "1" }));
    await manager.handleMessage(message("b", { chat: "2" }));
    await model.callCount(2);
    assert.deepEqual(model.calls.map((call) => call.sessionId), ["test:1", "test:2"]);
    model.calls.forEach((call) => call.finish());
    await manager.idle();
    stop.abort();
    await done;
  });

  it("hands a steered message to the running turn, which consumes it once", async () => {
    const model = gatedModel({ drainSteering: true });
    const { manager, stop, done } = await running([model.plugin, steeringPlugin, admissionPlugin((_content, turn) => (turn.isRunning ? { action: "steer", reason: "busy" } : null))]);
    await manager.handleMessage(message("start"));
    await model.callCount(1);
    await manager.handleMessage(message("also this"));
    assert.equal(manager.snapshot("test:1").steeringCount, 1);
    model.calls[0]!.finish();
    await manager.idle();
    assert.equal(model.calls.length, 1, "no extra turn for a consumed steering message");
    assert.deepEqual(model.calls[0]!.steered.map(contentOf), ["also this"]);
    assert.equal((model.calls[0]!.steered[0] as ChannelMessage).context.steering_reason, "busy");
    stop.abort();
    await done;
  });

  it("moves unread steering messages to the front of the pending queue", async () => {
    const model = gatedModel();
    const decide = (content: string, turn: { isRunning: boolean }) => (!turn.isRunning ? null : content.startsWith("steer") ? { action: "steer" as const } : { action: "follow_up" as const });
    const { manager, stop, done } = await running([model.plugin, steeringPlugin, admissionPlugin(decide)]);
    await manager.handleMessage(message("first"));
    await model.callCount(1);
    await manager.handleMessage(message("follow"));
    await manager.handleMessage(message("steer me"));
    await model.finishInOrder(3);
    await manager.idle();
    assert.deepEqual(model.prompts(), ["first", "steer me", "follow"]);
    stop.abort();
    await done;
  });

  it("files steering under the message's thread id and still promotes it", async () => {
    const model = gatedModel();
    const { manager, stop, done } = await running([model.plugin, steeringPlugin, admissionPlugin((_c, turn) => (turn.isRunning ? { action: "steer" } : null))]);
    await manager.handleMessage(message("first", { thread: "t-9" }));
    await model.callCount(1);
    await manager.handleMessage(message("second", { thread: "t-9" }));
    await model.finishInOrder(2);
    await manager.idle();
    assert.deepEqual(model.prompts(), ["first", "second"]);
    stop.abort();
    await done;
  });

  it("treats steer as a follow-up when there is no steering inbox, and as process when idle", async () => {
    const model = gatedModel();
    const { manager, stop, done } = await running([model.plugin, admissionPlugin(() => ({ action: "steer" }))]);
    await manager.handleMessage(message("a"));
    await model.callCount(1);
    await manager.handleMessage(message("b"));
    assert.equal(manager.snapshot("test:1").pendingCount, 1);
    await model.finishInOrder(2);
    await manager.idle();
    assert.deepEqual(model.prompts(), ["a", "b"]);
    stop.abort();
    await done;
  });

  it("promotes steering left by a failed turn too, so nothing admitted is lost", async () => {
    const model = gatedModel();
    const { manager, stop, done } = await running([model.plugin, steeringPlugin, admissionPlugin((_c, turn) => (turn.isRunning ? { action: "steer" } : null))]);
    await captureLogs(async () => {
      await manager.handleMessage(message("boom"));
      await model.callCount(1);
      await manager.handleMessage(message("rescued"));
      model.calls[0]!.fail(new Error("model down"));
      await model.callCount(2);
      model.calls[1]!.finish();
      await manager.idle();
    });
    assert.deepEqual(model.prompts(), ["boom", "rescued"]);
    stop.abort();
    await done;
  });

  it("processes the message when the admission hook fails, and reports it", async () => {
    const model = gatedModel();
    const stages: string[] = [];
    const failing: BubPlugin = { name: "bad-admission", admitMessage: () => { throw new Error("policy broke"); }, onError: ({ stage }) => void stages.push(stage) };
    const { manager, stop, done } = await running([model.plugin, failing]);
    await captureLogs(async () => {
      await manager.handleMessage(message("still runs"));
      await model.callCount(1);
    });
    model.calls[0]!.finish();
    await manager.idle();
    assert.deepEqual(stages, ["admit_message"]);
    stop.abort();
    await done;
  });

  it("drops the message when resolveSession fails, and reports it", async () => {
    const model = gatedModel();
    const stages: string[] = [];
    const failing: BubPlugin = { name: "bad-session", resolveSession: () => { throw new Error("no session"); }, onError: ({ stage }) => void stages.push(stage) };
    const { manager, stop, done } = await running([model.plugin, failing]);
    await captureLogs(() => manager.handleMessage(message("lost")));
    await manager.idle();
    assert.equal(model.calls.length, 0);
    assert.deepEqual(stages, ["resolve_session"]);
    stop.abort();
    await done;
  });

  it("applies the channel's own policy first, then the BUB_ADMISSION setting", async () => {
    const model = gatedModel();
    let bub!: BubFramework;
    const builtin: BubPlugin = { name: "builtin-admission", admitMessage: (args) => builtinAdmission(bub, args) };
    const channel = new RecordingChannel("test");
    const started = await running([model.plugin, builtin], { env: { BUB_ADMISSION: "follow_up" }, channel });
    bub = started.bub;
    bub.settings.register(channelSettings);
    await bub.settings.prepare();
    const { manager, stop, done } = started;
    await manager.handleMessage(message("a"));
    await model.callCount(1);
    await manager.handleMessage(message("b"));
    assert.equal(manager.snapshot("test:1").pendingCount, 1, "BUB_ADMISSION=follow_up queues it");
    channel.policy = () => ({ action: "drop" });
    await manager.handleMessage(message("c"));
    assert.equal(manager.snapshot("test:1").pendingCount, 1, "the channel's policy dropped it");
    await model.finishInOrder(2);
    await manager.idle();
    assert.deepEqual(model.prompts(), ["a", "b"]);
    stop.abort();
    await done;
  });

  it("loses no message and keeps each session's order under follow-up admission", async () => {
    const { seen, model } = instantModel();
    const { manager, stop, done } = await running([model, admissionPlugin(() => ({ action: "follow_up" }))]);
    const sends: Promise<void>[] = [];
    for (let index = 0; index < 5; index++) for (let chat = 0; chat < 50; chat++) sends.push(manager.handleMessage(message(`m${index}`, { chat: String(chat) })));
    await Promise.all(sends);
    await manager.idle();
    assert.equal(seen.size, 50);
    for (const prompts of seen.values()) assert.deepEqual(prompts, ["m0", "m1", "m2", "m3", "m4"]);
    stop.abort();
    await done;
  });
});

describe("ChannelManager admission order", () => {
  it("keeps arrival order when some admissions take a promise and others do not", async () => {
    const { seen, model } = instantModel();
    // Every third message's session and admission come back as promises.
    const slow = (content: string) => Number(content.slice(1)) % 3 === 0;
    const hooks: BubPlugin = {
      name: "mixed",
      resolveSession: ({ message }) => (slow(contentOf(message)) ? Promise.resolve(null) : null),
      admitMessage: ({ message }) => (slow(contentOf(message)) ? Promise.resolve({ action: "follow_up" as const }) : { action: "follow_up" as const }),
    };
    const { manager, stop, done } = await running([model, hooks]);
    const sends: Promise<void>[] = [];
    for (let index = 0; index < 6; index++) for (let chat = 0; chat < 4; chat++) sends.push(manager.handleMessage(message(`m${index}`, { chat: String(chat) })));
    await Promise.all(sends);
    await manager.idle();
    assert.equal(seen.size, 4);
    for (const prompts of seen.values()) assert.deepEqual(prompts, ["m0", "m1", "m2", "m3", "m4", "m5"]);
    stop.abort();
    await done;
  });

  it("queues a message handed in by a hook during admission behind the one being admitted", async () => {
    const model = gatedModel();
    let manager!: ChannelManager;
    let injected = false;
    const reentrant: BubPlugin = {
      name: "reentrant",
      admitMessage: ({ message: inbound }) => {
        if (!injected && contentOf(inbound) === "first") {
          injected = true;
          void manager.handleMessage(message("second"));
        }
        return { action: "follow_up" };
      },
    };
    const started = await running([model.plugin, reentrant]);
    manager = started.manager;
    await manager.handleMessage(message("first"));
    await model.callCount(1);
    assert.equal(manager.snapshot("test:1").pendingCount, 1);
    await model.finishInOrder(2);
    await manager.idle();
    assert.deepEqual(model.prompts(), ["first", "second"]);
    started.stop.abort();
    await started.done;
  });

  it("gives every follow-up turn its own signal, and none outside a turn", async () => {
    const model = gatedModel();
    const { manager, stop, done } = await running([model.plugin, admissionPlugin(() => ({ action: "follow_up" }))]);
    for (const content of ["one", "two", "three"]) await manager.handleMessage(message(content));
    await model.callCount(1);
    model.calls[0]!.finish();
    await model.callCount(2);
    assert.equal(currentTurnSignal(), null, "the test body runs in no turn");
    await captureLogs(() => manager.quit("test:1"));
    await manager.idle();
    assert.deepEqual(model.prompts(), ["one", "two"], "quit forgot the third");
    const [first, second] = model.calls.map((call) => call.signal);
    assert.ok(first && second && first !== second);
    assert.equal(first.aborted, false, "the finished turn was not cancelled");
    assert.equal(second.aborted, true, "the running follow-up was");
    stop.abort();
    await done;
  });
});

describe("ChannelManager debounce", () => {
  it("turns a burst on a debounced channel into one turn, and flushes buffers at shutdown", async () => {
    const model = gatedModel();
    let bub!: BubFramework;
    bub = testFramework([routerDispatch(() => bub), model.plugin]);
    const channel = new RecordingChannel("chatty", { needsDebounce: true });
    let fire: (() => void) | null = null;
    const clock = { now: () => 0, setTimer: (_ms: number, callback: () => void) => ((fire = callback), () => (fire = null)) };
    const manager = new ChannelManager(bub, { channels: [channel], enabledChannels: ["chatty"], clock });
    const stop = new AbortController();
    const done = manager.run(stop.signal);
    await manager.ready();
    const burst = (content: string) => new ChannelMessage({ sessionId: "chatty:1", channel: "chatty", chatId: "1", content, isActive: true });
    await captureLogs(async () => {
      await manager.handleMessage(burst("one"));
      await manager.handleMessage(burst("two"));
      (fire as (() => void) | null)?.();
      await model.callCount(1);
      await manager.handleMessage(burst("three"));
    });
    assert.deepEqual(model.prompts(), ["one\ntwo"]);
    model.calls[0]!.finish();
    stop.abort();
    await model.callCount(2);
    model.calls[1]!.finish();
    await done;
    assert.deepEqual(model.prompts(), ["one\ntwo", "three"]);
  });
});

describe("ChannelManager routing", () => {
  it("sends outbounds to output_channel, else channel, and reports unknown targets", async () => {
    const other = new RecordingChannel("other");
    let bub!: BubFramework;
    bub = testFramework([]);
    const test = new RecordingChannel("test");
    const manager = new ChannelManager(bub, { channels: [test, other], enabledChannels: ["test", "other"] });
    const stop = new AbortController();
    const done = manager.run(stop.signal);
    await manager.ready();
    await captureLogs(() => manager.handleMessage({ channel: "nowhere", content: "x" }));
    assert.equal(await manager.dispatchOutput({ channel: "test", output_channel: "other", chat_id: "9", content: "hi", session_id: "s" }), true);
    assert.equal(await manager.dispatchOutput({ channel: "test", content: "plain" }), true);
    assert.equal(await manager.dispatchOutput({ channel: "nowhere", content: "lost" }), false);
    const routed = other.sent[0] as ChannelMessage;
    assert.equal(routed.chatId, "9");
    assert.equal(routed.sessionId, "s");
    assert.equal((test.sent[0] as ChannelMessage).sessionId, "test:default");
    stop.abort();
    await done;
  });

  it("rejects when the target channel fails to send, even synchronously", async () => {
    const channel = new RecordingChannel("test");
    channel.send = () => {
      throw new Error("socket closed");
    };
    const manager = new ChannelManager(testFramework([]), { channels: [channel], enabledChannels: ["test"] });
    const stop = new AbortController();
    const done = manager.run(stop.signal);
    await manager.ready();
    await assert.rejects(manager.dispatchOutput({ channel: "test", content: "x" }), /socket closed/);
    stop.abort();
    await done;
  });

  it("lets the target channel wrap a turn's stream, keeping its state", async () => {
    const channel = new RecordingChannel("test");
    (channel as { streamEvents?: unknown }).streamEvents = async function* (_message: unknown, stream: AsyncStreamEvents) {
      for await (const event of stream) yield event.kind === "text" ? { kind: "text" as const, data: { delta: event.data.delta.toUpperCase() } } : event;
    };
    const manager = new ChannelManager(testFramework([]), { channels: [channel], enabledChannels: ["test"] });
    const stop = new AbortController();
    const done = manager.run(stop.signal);
    await manager.ready();
    const stream = AsyncStreamEvents.of([{ kind: "text", data: { delta: "hi" } }]);
    const wrapped = manager.wrapStream(message("x"), stream);
    assert.equal(wrapped.state, stream.state);
    assert.equal(await collectText(wrapped), "HI");
    stop.abort();
    await done;
  });
});

describe("ChannelManager quit and shutdown", () => {
  it("quit cancels a session's running turns and forgets its pending messages", async () => {
    const model = gatedModel();
    const { manager, stop, done } = await running([model.plugin, admissionPlugin(() => ({ action: "follow_up" }))]);
    await manager.handleMessage(message("long"));
    await model.callCount(1);
    await manager.handleMessage(message("queued"));
    await captureLogs(() => manager.quit("test:1"));
    assert.equal(model.calls[0]!.signal?.aborted, true);
    await manager.idle();
    assert.deepEqual(model.prompts(), ["long"]);
    assert.deepEqual(manager.snapshot("test:1"), { sessionId: "test:1", isRunning: false, runningCount: 0, pendingCount: 0, steeringCount: 0 });
    stop.abort();
    await done;
  });

  it("stops taking messages, lets running turns finish and deliver, then stops channels", async () => {
    const model = gatedModel();
    const { manager, channel, done } = await running([model.plugin]);
    await manager.handleMessage(message("working"));
    await model.callCount(1);
    const shutdown = manager.shutdown();
    assert.equal(channel.startSignal?.aborted, true, "channels are told to stop taking messages");
    await captureLogs(() => manager.handleMessage(message("too late")));
    model.calls[0]!.finish("finished");
    await shutdown;
    await done;
    assert.deepEqual(model.prompts(), ["working"]);
    assert.deepEqual(channel.events, ["start", "send:finished", "stop"]);
  });

  it("runs admitted follow-ups during the grace period", async () => {
    const model = gatedModel();
    const { manager, done } = await running([model.plugin, admissionPlugin(() => ({ action: "follow_up" }))]);
    await manager.handleMessage(message("one"));
    await model.callCount(1);
    await manager.handleMessage(message("two"));
    const shutdown = manager.shutdown();
    await model.finishInOrder(2);
    await shutdown;
    await done;
    assert.deepEqual(model.prompts(), ["one", "two"]);
  });

  it("cancels turns still running when the grace period ends", async () => {
    const model = gatedModel();
    const { manager, channel, done } = await running([model.plugin], { graceSeconds: 0 });
    await manager.handleMessage(message("stuck"));
    await model.callCount(1);
    const { logs } = await captureLogs(() => manager.shutdown());
    await done;
    assert.equal(model.calls[0]!.signal?.aborted, true);
    assert.ok(logs.some((log) => /cancelled 1 in-flight tasks/.test(log.message)));
    assert.deepEqual(channel.events, ["start", "stop"]);
  });
});
