import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createChannelHooks } from "../../src/channels/builtin-hooks.ts";
import { toEnvelope } from "../../src/kernel/envelope.ts";
import { kernelFramework } from "../support/framework.ts";

describe("the builtin channel hooks", () => {
  it("provide the Telegram channel, a steering inbox keyed by target, and the default admission", async () => {
    const framework = kernelFramework();
    const hooks = createChannelHooks(framework);
    const channels = hooks.provideChannels?.({ messageHandler: async () => undefined });
    assert.deepEqual(Array.isArray(channels) ? channels.map((channel) => channel.name) : channels, ["telegram"]);
    const inbox = hooks.provideSteeringInbox?.({});
    assert.ok(inbox && "enqueueMessage" in inbox);
    inbox.enqueueMessage(toEnvelope("more"), { sessionId: "t:1" });
    assert.equal(inbox.messageCount({ sessionId: "t:1" }), 1);
    assert.equal(inbox.messageCount({ sessionId: "t:1", threadId: "x" }), 0);
    const turn = { sessionId: "t:1", isRunning: false, runningCount: 0, pendingCount: 0, steeringCount: 0 };
    const decision = await hooks.admitMessage?.({ sessionId: "t:1", message: toEnvelope("hi"), turn }, async () => undefined);
    assert.ok(decision === null || decision === undefined || decision.action === "process", JSON.stringify(decision));
  });
});
