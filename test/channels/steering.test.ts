import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createSteeringInbox, steerMessage, steeringStateOf } from "../../src/channels/steering.ts";
import type { SteeringInbox, TurnState } from "../../src/kernel/types.ts";
import { ChannelMessage } from "../../src/channels/message.ts";

describe("in-memory steering inbox", () => {
  it("keys messages by thread id, then session id, then 'default'", () => {
    const inbox = createSteeringInbox();
    inbox.enqueueMessage("by-thread", { session_id: "s", _runtime_thread_id: "t" });
    inbox.enqueueMessage("by-session", { session_id: "s" });
    inbox.enqueueMessage("by-default", {});
    assert.equal(inbox.messageCount({ _runtime_thread_id: "t" }), 1);
    assert.deepEqual(inbox.drainMessages({ session_id: "s" }), ["by-session"]);
    assert.deepEqual(inbox.drainMessages({ session_id: "other", _runtime_thread_id: "t" }), ["by-thread"]);
    assert.deepEqual(inbox.drainMessages({}), ["by-default"]);
  });

  it("drains in arrival order and only once", () => {
    const inbox = createSteeringInbox();
    for (const message of ["a", "b", "c"]) inbox.enqueueMessage(message, { session_id: "s" });
    assert.equal(inbox.messageCount({ session_id: "s" }), 3);
    assert.deepEqual(inbox.drainMessages({ session_id: "s" }), ["a", "b", "c"]);
    assert.deepEqual(inbox.drainMessages({ session_id: "s" }), []);
    assert.equal(inbox.messageCount({ session_id: "s" }), 0);
  });
});

describe("steeringStateOf", () => {
  it("files a message under its session, and its context's thread id when it has one", () => {
    assert.deepEqual(steeringStateOf("s", { content: "x" }), { session_id: "s" });
    assert.deepEqual(steeringStateOf("s", { context: { thread_id: 42 } }), { session_id: "s", _runtime_thread_id: "42" });
    const threaded = new ChannelMessage({ sessionId: "t:1", channel: "t", chatId: "1", content: "x", context: { thread_id: "th" } });
    assert.deepEqual(steeringStateOf("t:1", threaded), { session_id: "t:1", _runtime_thread_id: "th" });
  });

  it("ignores an empty or missing thread id and a context that is not an object", () => {
    for (const context of [{ thread_id: "" }, { thread_id: null }, {}, "thread", null]) assert.deepEqual(steeringStateOf("s", { context }), { session_id: "s" });
  });
});

describe("steerMessage", () => {
  it("steers a message into the inbox with the reason in its context", () => {
    const queued: unknown[] = [];
    const inbox: SteeringInbox = { enqueueMessage: (message) => void queued.push(message), drainMessages: () => [], messageCount: () => queued.length };
    const framework = { steeringInbox: null };
    const state: TurnState = { _runtime_steering_inbox: inbox };
    assert.equal(steerMessage(framework, { content: "more", context: { a: 1 } }, "s1", state, "user typed"), true);
    assert.deepEqual(queued, [{ content: "more", context: { a: 1, steering_reason: "user typed" } }]);
    assert.equal(state.session_id, "s1");
    assert.equal(steerMessage(framework, { content: "x" }, "s1", {}), false);
  });
});
