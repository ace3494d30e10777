import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ChannelManager } from "../../src/channels/manager.ts";
import type { ChannelMessage } from "../../src/channels/message.ts";
import { OutboundRouter, outboundMessage } from "../../src/channels/outbound.ts";
import { AsyncStreamEvents, collectText } from "../../src/kernel/stream.ts";
import type { Channel } from "../../src/kernel/types.ts";
import { toEnvelope } from "../../src/kernel/envelope.ts";
import type { BubFramework } from "../../src/kernel/framework.ts";
import { captureLogs } from "../support/temp.ts";
import { message, RecordingChannel, testFramework } from "./support.ts";

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
    assert.equal(await manager.dispatchOutput(toEnvelope({ channel: "test", output_channel: "other", chat_id: "9", content: "hi", session_id: "s" })), true);
    assert.equal(await manager.dispatchOutput(toEnvelope({ channel: "test", content: "plain" })), true);
    const lost = await captureLogs(() => manager.dispatchOutput(toEnvelope({ channel: "nowhere", content: "lost", session_id: "s9" })));
    assert.equal(lost.result, false);
    assert.deepEqual(
      lost.logs.map(({ level, message }) => ({ level, message })),
      [{ level: "warn", message: "channel.outbound undelivered session_id=s9: no channel is named 'nowhere' — send it to one of the running channels (test, other) through output_channel or channel" }],
    );
    const routed = other.sent[0] as ChannelMessage;
    assert.equal(routed.chatId, "9");
    assert.equal(routed.sessionId, "s");
    assert.equal((test.sent[0] as ChannelMessage).sessionId, "test:default");
    stop.abort();
    await done;
  });

  it("warns, naming the channel, when the target is known but not running or when no channel is named", async () => {
    const idle = new RecordingChannel("idle");
    const test = new RecordingChannel("test");
    const manager = new ChannelManager(testFramework([]), { channels: [test, idle], enabledChannels: ["test"] });
    const stop = new AbortController();
    const done = manager.run(stop.signal);
    await manager.ready();
    const { result, logs } = await captureLogs(async () => [await manager.dispatchOutput(toEnvelope({ output_channel: "idle", channel: "test", content: "x" })), await manager.dispatchOutput(toEnvelope({ content: "y" }))]);
    assert.deepEqual(result, [false, false]);
    assert.deepEqual(logs.map((record) => record.message), [
      "channel.outbound undelivered session_id=?: channel 'idle' is not running — send it to one of the running channels (test) through output_channel or channel",
      "channel.outbound undelivered session_id=?: the outbound names no channel (neither output_channel nor channel) — set one of them (running channels: test)",
    ]);
    assert.equal(test.sent.length, 0);
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
    await assert.rejects(manager.dispatchOutput(toEnvelope({ channel: "test", content: "x" })), /socket closed/);
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

describe("outboundMessage", () => {
  const channel = new RecordingChannel("chat");

  it("fills in the session and chat the outbound leaves out", () => {
    const sent = outboundMessage(channel, toEnvelope({ channel: "elsewhere", content: 42 }));
    assert.equal(sent.channel, "chat");
    assert.equal(sent.sessionId, "chat:default");
    assert.equal(sent.chatId, "default");
    assert.equal(sent.content, "42");
    assert.equal(outboundMessage(channel, toEnvelope({ session_id: "", chat_id: "" })).content, "");
  });

  it("keeps command and error kinds, and makes anything else normal", () => {
    assert.equal(outboundMessage(channel, toEnvelope({ kind: "command" })).kind, "command");
    assert.equal(outboundMessage(channel, toEnvelope({ kind: "error" })).kind, "error");
    assert.equal(outboundMessage(channel, toEnvelope({ kind: "shout" })).kind, "normal");
  });

  it("copies the context, and takes only an object as one", () => {
    const outbound = toEnvelope({ context: { thread_id: "t" } });
    const context = outbound.context;
    const sent = outboundMessage(channel, outbound);
    assert.equal(sent.context.thread_id, "t");
    assert.notEqual(sent.context, context);
    assert.equal(outbound.context, context);
    assert.deepEqual(context, { thread_id: "t" }, "the outbound's own context is left as it was");
    assert.deepEqual(outboundMessage(channel, toEnvelope({ context: "nope" })).context, outboundMessage(channel, toEnvelope({})).context);
  });
});

describe("OutboundRouter", () => {
  function setup() {
    const chat = new RecordingChannel("chat");
    const idle = new RecordingChannel("idle");
    const running = new Set<Channel>([chat]);
    const router = new OutboundRouter(new Map<string, Channel>([["chat", chat], ["idle", idle]]), (channel) => running.has(channel));
    return { chat, idle, running, router };
  }

  it("targets output_channel when it is a non-empty string, else channel", () => {
    const { chat, router } = setup();
    assert.equal(router.target(toEnvelope({ channel: "idle", output_channel: "chat" })), chat);
    assert.equal(router.target(toEnvelope({ channel: "chat", output_channel: "" })), chat);
    assert.equal(router.target(toEnvelope({ channel: "chat", output_channel: 7 })), chat);
    assert.equal(router.target(toEnvelope({ content: "no channel" })), null);
  });

  it("sends only to running channels", async () => {
    const { idle, running, router } = setup();
    assert.equal(router.target(toEnvelope({ channel: "idle" })), null);
    assert.equal(await router.dispatch(toEnvelope({ channel: "idle", content: "x" })), false);
    running.add(idle);
    assert.equal(await router.dispatch(toEnvelope({ channel: "idle", content: "x" })), true);
    assert.deepEqual(idle.events, ["send:x"]);
  });

  it("resolves true for a channel whose send returns nothing", async () => {
    const { chat, router } = setup();
    chat.send = (() => undefined) as unknown as Channel["send"];
    assert.equal(await router.dispatch(toEnvelope({ channel: "chat", content: "x" })), true);
  });

  it("leaves a stream alone without a target or when the target does not render streams", async () => {
    const { router } = setup();
    const stream = AsyncStreamEvents.of([{ kind: "text", data: { delta: "hi" } }]);
    assert.equal(router.wrapStream(toEnvelope({ channel: "chat" }), stream), stream);
    assert.equal(router.wrapStream(toEnvelope({ channel: "nowhere" }), stream), stream);
    assert.equal(await collectText(stream), "hi");
  });
});
