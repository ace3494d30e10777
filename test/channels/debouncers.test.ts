import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ChannelManager } from "../../src/channels/manager.ts";
import { ChannelMessage } from "../../src/channels/message.ts";
import { ChannelDebouncers, debounceWindows, IDLE_SWEEP_SECONDS } from "../../src/channels/debouncers.ts";
import type { DebounceClock } from "../../src/channels/debounce.ts";
import { channelSettings } from "../../src/builtin/settings.ts";
import { toEnvelope, type Envelope } from "../../src/kernel/envelope.ts";
import type { BubFramework } from "../../src/kernel/framework.ts";
import { captureLogs } from "../support/temp.ts";
import { gatedModel, RecordingChannel, testFramework } from "./support.ts";

describe("ChannelManager debounce", () => {
  it("turns a burst on a debounced channel into one turn, and flushes buffers at shutdown", async () => {
    const model = gatedModel();
    let bub!: BubFramework;
    bub = testFramework([model.plugin]);
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

describe("ChannelDebouncers: idle sessions are forgotten", () => {
  /** Debouncers over a clock the test moves by hand; timers fire when it passes their deadline. */
  function timed(activeTimeWindow = 60) {
    let now = 0;
    let timers: { at: number; callback: () => void; background: boolean }[] = [];
    const clock: DebounceClock = {
      now: () => now,
      setTimer(ms, callback, options) {
        const timer = { at: now + ms, callback, background: options?.background === true };
        timers.push(timer);
        return () => {
          timers = timers.filter((other) => other !== timer);
        };
      },
    };
    const forwarded: Envelope[] = [];
    const debouncers = new ChannelDebouncers((batch) => forwarded.push(batch), () => ({ debounceSeconds: 1, maxWaitSeconds: 10, activeTimeWindow }), clock);
    const message = (chat: string, content: string, isActive = true) => new ChannelMessage({ sessionId: `chat:${chat}`, channel: "chat", chatId: chat, content, isActive });
    const advance = (ms: number) => {
      const until = now + ms;
      for (;;) {
        const due = timers.filter((timer) => timer.at <= until).sort((a, b) => a.at - b.at)[0];
        if (!due) break;
        timers = timers.filter((timer) => timer !== due);
        now = due.at;
        due.callback();
      }
      now = until;
    };
    return { debouncers, forwarded, message, advance, timers: () => timers };
  }

  it("keeps one buffer per session in use and none once 10,000 sessions have gone quiet", async () => {
    const { debouncers, forwarded, message, advance, timers } = timed();
    await captureLogs(() => {
      for (let chat = 0; chat < 10_000; chat++) debouncers.handle("chat", message(String(chat), `hello ${chat}`));
    });
    assert.equal(debouncers.size, 10_000);
    advance(1_000); // the quiet time: every batch goes
    assert.equal(forwarded.length, 10_000);
    advance(59_000);
    assert.equal(debouncers.size, 10_000, "within the active window a session keeps its buffer");
    advance(IDLE_SWEEP_SECONDS * 1000 + 1);
    assert.equal(debouncers.size, 0, "released once idle");
    assert.deepEqual(timers(), [], "and the sweep stops when nothing is left");
  });

  it("keeps a buffer that holds a batch, and one whose active window is still open", async () => {
    const { debouncers, forwarded, message, advance } = timed(5);
    await captureLogs(() => {
      debouncers.handle("chat", message("busy", "first"));
      debouncers.handle("chat", message("quiet", "first"));
    });
    advance(1_000);
    assert.equal(forwarded.length, 2);
    // "busy" keeps talking: inactive chatter joins its batch (sent after maxWait, 10 s).
    await captureLogs(() => debouncers.handle("chat", message("busy", "chatter", false)));
    advance(IDLE_SWEEP_SECONDS * 1000);
    assert.equal(debouncers.size, 1, "the quiet session went; the busy one holds a batch");
    advance(10_000);
    assert.equal(forwarded.length, 3, "the chatter was sent");
    advance(IDLE_SWEEP_SECONDS * 1000);
    assert.equal(debouncers.size, 0);
  });

  it("treats a message after the release as a fresh buffer would: chatter after the window is dropped", async () => {
    const { debouncers, forwarded, message, advance } = timed(5);
    await captureLogs(() => debouncers.handle("chat", message("1", "hi")));
    advance(IDLE_SWEEP_SECONDS * 1000 + 1_000);
    assert.equal(debouncers.size, 0);
    await captureLogs(() => debouncers.handle("chat", message("1", "not for the bot", false)));
    advance(60_000);
    assert.deepEqual(forwarded.map((sent) => sent.content), ["hi"]);
  });

  it("asks for a background timer, so the sweep never keeps the process alive", async () => {
    const { debouncers, message, timers } = timed();
    await captureLogs(() => debouncers.handle("chat", message("1", "hi")));
    assert.deepEqual(timers().map((timer) => timer.background).sort(), [false, true], "the debounce timer, and the sweep in the background");
    debouncers.flushAll();
    assert.deepEqual(timers(), [], "flushAll stops the sweep");
  });
});
