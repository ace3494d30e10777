import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { BufferedMessageHandler, type DebounceClock } from "../../src/channels/debounce.ts";
import { ChannelMessage } from "../../src/channels/message.ts";
import type { Envelope } from "../../src/kernel/envelope.ts";
import { captureLogs } from "../support/temp.ts";

/** A clock the test moves by hand; timers fire when it passes their deadline. */
function manualClock() {
  let now = 0;
  let timers: { at: number; callback: () => void }[] = [];
  const clock: DebounceClock = {
    now: () => now,
    setTimer(ms, callback) {
      const timer = { at: now + ms, callback };
      timers.push(timer);
      return () => {
        timers = timers.filter((other) => other !== timer);
      };
    },
  };
  return {
    clock,
    advance(ms: number) {
      now += ms;
      const due = timers.filter((timer) => timer.at <= now);
      timers = timers.filter((timer) => timer.at > now);
      for (const timer of due) timer.callback();
    },
  };
}

const windows = { debounceSeconds: 1, maxWaitSeconds: 10, activeTimeWindow: 60 };

function setup() {
  const forwarded: Envelope[] = [];
  const time = manualClock();
  const handler = new BufferedMessageHandler((message) => forwarded.push(message), windows, time.clock);
  const send = (content: string, isActive: boolean) => handler.handle(new ChannelMessage({ sessionId: "tg:1", channel: "telegram", chatId: "1", content, isActive }));
  return { forwarded, time, handler, send, contents: () => forwarded.map((message) => (message as ChannelMessage).content) };
}

describe("BufferedMessageHandler", () => {
  it("joins a burst of active messages into one after the quiet time", async () => {
    const { time, send, contents } = setup();
    await captureLogs(() => {
      send("hello", true);
      time.advance(500);
      send("are you there", true);
      time.advance(999);
      assert.deepEqual(contents(), [], "the second message restarted the quiet timer");
      time.advance(1);
    });
    assert.deepEqual(contents(), ["hello\nare you there"]);
  });

  it("drops inactive chatter when the bot was not addressed recently", async () => {
    const { time, send, contents, handler } = setup();
    await captureLogs(() => {
      send("people talking", false);
      time.advance(20_000);
    });
    assert.deepEqual(contents(), []);
    assert.equal(handler.pendingCount, 0);
  });

  it("picks up inactive messages within the active window, at the latest after max wait", async () => {
    const { time, send, contents } = setup();
    await captureLogs(() => {
      send("bub, look", true);
      time.advance(1000);
      send("context line", false);
      time.advance(9_999);
      assert.deepEqual(contents(), ["bub, look"]);
      time.advance(1);
    });
    assert.deepEqual(contents(), ["bub, look", "context line"]);
  });

  it("stops picking up inactive messages once the active window has passed", async () => {
    const { time, send, contents } = setup();
    await captureLogs(() => {
      send("bub?", true);
      time.advance(1000);
      time.advance(60_001);
      send("later chatter", false);
      time.advance(20_000);
    });
    assert.deepEqual(contents(), ["bub?"]);
  });

  it("forwards commands at once, bypassing the buffer", async () => {
    const { send, contents } = setup();
    await captureLogs(() => send(",help", false));
    assert.deepEqual(contents(), [",help"]);
  });

  it("flush sends what is buffered right away", async () => {
    const { send, contents, handler } = setup();
    await captureLogs(() => send("pending", true));
    handler.flush();
    assert.deepEqual(contents(), ["pending"]);
  });

  it("is idle only with nothing buffered, no timer, and the active window past", async () => {
    const { time, send, handler } = setup();
    assert.equal(handler.isIdle(), true, "a fresh handler");
    await captureLogs(() => {
      send("bub?", true);
      assert.equal(handler.isIdle(), false, "a batch waits");
      time.advance(1000);
      assert.equal(handler.isIdle(), false, "sent, but chatter in the next minute would still be picked up");
      time.advance(59_000);
      assert.equal(handler.isIdle(), false, "exactly at the end of the window (60 s after the active message) it still counts");
      time.advance(1);
      assert.equal(handler.isIdle(), true);
    });
  });
});
