import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ChannelManager } from "../../src/channels/manager.ts";
import { ChannelMessage } from "../../src/channels/message.ts";
import { ChannelDebouncers, debounceWindows } from "../../src/channels/debouncers.ts";
import type { DebounceClock } from "../../src/channels/debounce.ts";
import { channelSettings } from "../../src/builtin/settings.ts";
import { toEnvelope, type Envelope } from "../../src/kernel/envelope.ts";
import type { BubFramework } from "../../src/kernel/framework.ts";
import { captureLogs } from "../support/temp.ts";
import { gatedModel, RecordingChannel, routerDispatch, testFramework } from "./support.ts";

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

describe("debounceWindows", () => {
  it("takes the given windows first, then the settings, then the defaults", async () => {
    const bub = testFramework([], { BUB_DEBOUNCE_SECONDS: "2.5", BUB_ACTIVE_TIME_WINDOW: "5" });
    assert.deepEqual(debounceWindows(bub), { debounceSeconds: 1, maxWaitSeconds: 10, activeTimeWindow: 60 }, "no channels section loaded: defaults");
    bub.settings.register(channelSettings);
    await bub.settings.prepare();
    assert.deepEqual(debounceWindows(bub), { debounceSeconds: 2.5, maxWaitSeconds: 10, activeTimeWindow: 5 });
    assert.deepEqual(debounceWindows(bub, { activeTimeWindow: 7, maxWaitSeconds: 0 }), { debounceSeconds: 2.5, maxWaitSeconds: 0, activeTimeWindow: 7 });
  });
});

describe("ChannelDebouncers", () => {
  /** Debouncers over a clock whose timers the test fires by hand. */
  function setup() {
    const forwarded: Envelope[] = [];
    const timers: (() => void)[] = [];
    const clock: DebounceClock = { now: () => 0, setTimer: (_ms, callback) => (timers.push(callback), () => timers.splice(timers.indexOf(callback), 1)) };
    let windowsAsked = 0;
    const windows = () => (windowsAsked++, { debounceSeconds: 1, maxWaitSeconds: 10, activeTimeWindow: 60 });
    const debouncers = new ChannelDebouncers((batch) => forwarded.push(batch), windows, clock);
    const active = (channel: string, chat: string, content: string) => new ChannelMessage({ sessionId: `${channel}:${chat}`, channel, chatId: chat, content, isActive: true });
    return { debouncers, forwarded, timers, active, windowsAsked: () => windowsAsked, contents: () => forwarded.map((sent) => sent.content) };
  }

  it("buffers each channel and session on its own", async () => {
    const { debouncers, timers, active, contents, windowsAsked } = setup();
    await captureLogs(() => {
      debouncers.handle("chat", active("chat", "1", "a1"));
      debouncers.handle("chat", active("chat", "2", "b1"));
      debouncers.handle("chat", active("chat", "1", "a2"));
      debouncers.handle("other", active("chat", "1", "c1"));
    });
    assert.equal(windowsAsked(), 3, "one buffer per channel and session");
    assert.deepEqual(contents(), []);
    for (const fire of [...timers]) fire();
    assert.deepEqual(contents().sort(), ["a1\na2", "b1", "c1"]);
  });

  it("flushAll sends every buffered batch now and starts over with fresh buffers", async () => {
    const { debouncers, active, contents, windowsAsked } = setup();
    await captureLogs(() => {
      debouncers.handle("chat", active("chat", "1", "one"));
      debouncers.handle("chat", active("chat", "2", "two"));
    });
    debouncers.flushAll();
    assert.deepEqual(contents(), ["one", "two"]);
    debouncers.flushAll();
    assert.deepEqual(contents(), ["one", "two"], "nothing is sent twice");
    await captureLogs(() => debouncers.handle("chat", active("chat", "1", "three")));
    assert.equal(windowsAsked(), 3, "a new buffer after the flush");
  });

  it("forwards what is not a channel message at once", () => {
    const { debouncers, forwarded } = setup();
    const plain = toEnvelope({ channel: "chat", chat_id: "1", content: "raw" });
    debouncers.handle("chat", plain);
    assert.deepEqual(forwarded, [plain]);
  });
});
