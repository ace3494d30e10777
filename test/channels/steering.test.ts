import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createSteeringInbox, steerMessage, steeringTargetOf } from "../../src/channels/steering.ts";
import type { SteeringInbox, SteeringTarget } from "../../src/kernel/types.ts";
import { toEnvelope, type Envelope } from "../../src/kernel/envelope.ts";
import { ChannelMessage } from "../../src/channels/message.ts";

const contents = (messages: Envelope[]) => messages.map((message) => message.content);

describe("in-memory steering inbox", () => {
  it("keys messages by thread id, then session id, then 'default'", () => {
    const inbox = createSteeringInbox();
    inbox.enqueueMessage(toEnvelope("by-thread"), { sessionId: "s", threadId: "t" });
    inbox.enqueueMessage(toEnvelope("by-session"), { sessionId: "s", threadId: null });
    inbox.enqueueMessage(toEnvelope("by-default"), { sessionId: "" });
    assert.equal(inbox.messageCount({ sessionId: "", threadId: "t" }), 1);
    assert.deepEqual(contents(inbox.drainMessages({ sessionId: "s" })), ["by-session"]);
    assert.deepEqual(contents(inbox.drainMessages({ sessionId: "other", threadId: "t" })), ["by-thread"]);
    assert.deepEqual(contents(inbox.drainMessages({ sessionId: "default" })), ["by-default"]);
  });

  it("drains in arrival order and only once", () => {
    const inbox = createSteeringInbox();
    const messages = ["a", "b", "c"].map((content) => toEnvelope(content));
    for (const message of messages) inbox.enqueueMessage(message, { sessionId: "s" });
    assert.equal(inbox.messageCount({ sessionId: "s" }), 3);
    const drained = inbox.drainMessages({ sessionId: "s" });
    assert.deepEqual(contents(drained), ["a", "b", "c"]);
    drained.forEach((message, index) => assert.equal(message, messages[index], "the very messages enqueued"));
    assert.deepEqual(inbox.drainMessages({ sessionId: "s" }), []);
    assert.equal(inbox.messageCount({ sessionId: "s" }), 0);
  });
});

describe("steeringTargetOf", () => {
  it("files a message under its session, and its context's thread id when it has one", () => {
    assert.deepEqual(steeringTargetOf("s", toEnvelope({ content: "x" })), { sessionId: "s", threadId: null });
    assert.deepEqual(steeringTargetOf("s", toEnvelope({ context: { thread_id: 42 } })), { sessionId: "s", threadId: "42" });
    const threaded = new ChannelMessage({ sessionId: "t:1", channel: "t", chatId: "1", content: "x", context: { thread_id: "th" } });
    assert.deepEqual(steeringTargetOf("t:1", threaded), { sessionId: "t:1", threadId: "th" });
  });

  it("ignores an empty or missing thread id and a context that is not an object", () => {
    for (const context of [{ thread_id: "" }, { thread_id: null }, {}, "thread", null]) assert.deepEqual(steeringTargetOf("s", toEnvelope({ context })), { sessionId: "s", threadId: null });
  });
});

describe("steerMessage", () => {
  it("steers a message into the framework's inbox for its target, with the reason in its context", () => {
    const queued: Envelope[] = [];
    const targets: SteeringTarget[] = [];
    const inbox: SteeringInbox = { enqueueMessage: (message, target) => void (queued.push(message), targets.push(target)), drainMessages: () => [], messageCount: () => queued.length };
    assert.equal(steerMessage({ steeringInbox: inbox }, toEnvelope({ content: "more", context: { a: 1 } }), { sessionId: "s1", threadId: "th" }, "user typed"), true);
    assert.deepEqual(queued, [toEnvelope({ content: "more", context: { a: 1, steering_reason: "user typed" } })]);
    assert.deepEqual(targets, [{ sessionId: "s1", threadId: "th" }]);
    assert.equal(steerMessage({ steeringInbox: inbox }, toEnvelope({ content: "plain", context: { a: 2 } }), { sessionId: "s1" }), true);
    assert.deepEqual(queued[1]!.context, { a: 2 }, "no reason, no steering_reason");
    assert.equal(steerMessage({ steeringInbox: null }, toEnvelope({ content: "x" }), { sessionId: "s1" }), false);
    assert.equal(queued.length, 2);
  });
});
