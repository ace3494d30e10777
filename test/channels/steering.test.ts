import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { createSteeringInbox } from "../../src/channels/steering.ts";

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
