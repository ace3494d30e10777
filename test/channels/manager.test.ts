import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ChannelMessage } from "../../src/channels/message.ts";
import { channelSettings } from "../../src/builtin/settings.ts";
import type { BubFramework } from "../../src/kernel/framework.ts";
import type { BubPlugin } from "../../src/kernel/hooks.ts";
import { captureLogs } from "../support/temp.ts";
import { ChannelManager } from "../../src/channels/manager.ts";
import { admissionPlugin, gatedModel, instantModel, message, RecordingChannel, running, steeringPlugin, testFramework } from "./support.ts";

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
    assert.deepEqual(channel.sent.map((sent) => sent.content).sort(), ["done:a", "done:b"]);
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
    assert.deepEqual(model.calls[0]!.steered.map((sent) => sent.content), ["also this"]);
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
    const channel = new RecordingChannel("test");
    const started = await running([model.plugin], { env: { BUB_ADMISSION: "follow_up" }, channel });
    const bub = started.bub;
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

describe("ChannelManager bound on concurrent turns", () => {
  it("runs at most BUB_MAX_CONCURRENT_TURNS turns at once, the rest starting in arrival order", async () => {
    const model = gatedModel();
    const { bub, manager, stop, done, channel } = await running([model.plugin], { env: { BUB_MAX_CONCURRENT_TURNS: "2" } });
    bub.settings.register(channelSettings);
    await bub.settings.prepare();
    for (const chat of ["1", "2", "3", "4"]) await manager.handleMessage(message(`m${chat}`, { chat }));
    await model.callCount(2);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(model.prompts(), ["m1", "m2"], "two run, two wait");
    assert.equal(manager.snapshot("test:3").isRunning, true, "a waiting turn is its session's running turn");
    model.calls[1]!.finish();
    await model.callCount(3);
    assert.deepEqual(model.prompts(), ["m1", "m2", "m3"]);
    model.calls[0]!.finish();
    await model.callCount(4);
    model.calls[2]!.finish();
    model.calls[3]!.finish();
    await manager.idle();
    assert.deepEqual(channel.sent.map((sent) => sent.content).sort(), ["done:m1", "done:m2", "done:m3", "done:m4"]);
    stop.abort();
    await done;
  });

  it("never starts a waiting turn whose session was quit, and gives its place on", async () => {
    const model = gatedModel();
    const { bub, manager, stop, done } = await running([model.plugin], { env: { BUB_MAX_CONCURRENT_TURNS: "1" } });
    bub.settings.register(channelSettings);
    await bub.settings.prepare();
    for (const chat of ["1", "2", "3"]) await manager.handleMessage(message(`m${chat}`, { chat }));
    await model.callCount(1);
    await manager.quit("test:2");
    model.calls[0]!.finish();
    await model.callCount(2);
    model.calls[1]!.finish();
    await manager.idle();
    assert.deepEqual(model.prompts(), ["m1", "m3"]);
    stop.abort();
    await done;
  });
});

describe("ChannelManager as a plugin", () => {
  it("is registered as `channels` only while it runs, and delivers, stops sessions and asks approvals through hooks", async () => {
    const model = gatedModel();
    const channel = new RecordingChannel("test");
    const asked: string[] = [];
    Object.assign(channel, { askApproval: async (request: { tool: string }) => (asked.push(request.tool), { approved: true, by: "test" }) });
    const { bub, manager, stop, done } = await running([model.plugin], { channel });
    assert.deepEqual(bub.hookReport().dispatchOutbound, ["channels"]);
    assert.equal(bub.hookReport().runModelStream, undefined, "a manager that does not stream stays out of the model hook");

    // An outbound sent outside a turn reaches the running channel through the hook.
    assert.deepEqual(await bub.runtime.call("dispatchOutbound", { message: message("notice") }), []);
    assert.deepEqual(channel.sent.map((sent) => sent.content), ["notice"]);

    // askApproval goes to the channel the request's turn came from; another channel's turn finds nobody.
    const request = { tool: "bash", arguments: {}, summary: "ls", reason: "runs a shell command", sessionId: "test:1", message: message("x") };
    assert.deepEqual(await bub.runtime.call("askApproval", { request, signal: new AbortController().signal }), { approved: true, by: "test" });
    assert.equal((await bub.runtime.call("askApproval", { request: { ...request, message: message("x", { channel: "other" }) }, signal: new AbortController().signal })) ?? null, null);
    assert.deepEqual(asked, ["bash"]);

    // quitSession cancels the session's running turn and drops what waits.
    await manager.handleMessage(message("a"));
    await model.callCount(1);
    await captureLogs(async () => {
      await bub.runtime.call("quitSession", { sessionId: "test:1" });
      await manager.idle();
    });
    assert.equal(model.calls[0]!.signal?.aborted, true);
    assert.equal(manager.snapshot("test:1").isRunning, false);

    stop.abort();
    await done;
    assert.equal(bub.hookReport().dispatchOutbound, undefined, "taken off when it stops");
  });

  it("shows a streaming turn's stream through its channel (runModelStream around the model's)", async () => {
    const { model } = instantModel();
    const bub = testFramework([model]);
    const channel = new RecordingChannel("test");
    const seen: string[] = [];
    Object.assign(channel, {
      async *streamEvents(_message: unknown, stream: AsyncIterable<{ kind: string }>) {
        for await (const event of stream) {
          seen.push(event.kind);
          yield event;
        }
      },
    });
    const manager = new ChannelManager(bub, { channels: [channel], enabledChannels: ["test"], streamOutput: true });
    const stop = new AbortController();
    const done = manager.run(stop.signal);
    await manager.ready();
    assert.deepEqual(bub.hookReport().runModelStream, ["channels"]);
    await manager.handleMessage(message("hello"));
    await manager.idle();
    assert.deepEqual(seen, ["text"]);
    // The same hook leaves a turn the manager did not start alone.
    await bub.processInbound(message("direct"));
    assert.deepEqual(seen, ["text"]);
    stop.abort();
    await done;
  });
});
