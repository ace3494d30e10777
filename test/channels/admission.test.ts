import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { builtinAdmission, channelOwnAdmission, decisionForPolicy } from "../../src/channels/admission.ts";
import { channelSettings } from "../../src/builtin/settings.ts";
import type { AdmitDecision, ChannelRouter } from "../../src/kernel/types.ts";
import { toEnvelope } from "../../src/kernel/envelope.ts";
import { RecordingChannel, testFramework } from "./support.ts";

const turn = { sessionId: "t:1", isRunning: true, runningCount: 1, pendingCount: 0, steeringCount: 0 };
const args = { sessionId: "t:1", message: toEnvelope({ channel: "t", content: "x" }), turn };

function router(answer: () => Promise<AdmitDecision | null>): ChannelRouter {
  return { dispatchOutput: async () => true, wrapStream: (_message, stream) => stream, quit: async () => {}, admitChannelMessage: answer };
}

describe("builtinAdmission", () => {
  it("answers the BUB_ADMISSION policy without a router", async () => {
    const bub = testFramework([], { BUB_ADMISSION: "steer" });
    assert.equal(await builtinAdmission(bub, args), null, "no channels section loaded: concurrent");
    bub.settings.register(channelSettings);
    await bub.settings.prepare();
    assert.deepEqual(await builtinAdmission(bub, args), { action: "steer", reason: "BUB_ADMISSION=steer" });
  });

  it("asks the bound router, and falls back to the policy when it has no answer", async () => {
    const bub = testFramework([], { BUB_ADMISSION: "follow_up" });
    bub.settings.register(channelSettings);
    await bub.settings.prepare();
    bub.bindChannelRouter(router(async () => null));
    assert.deepEqual(await builtinAdmission(bub, args), { action: "follow_up", reason: "BUB_ADMISSION=follow_up" });
    bub.bindChannelRouter(router(async () => ({ action: "drop", reason: "muted" })));
    assert.deepEqual(await builtinAdmission(bub, args), { action: "drop", reason: "muted" });
  });

  it("has one decision per policy", () => {
    assert.equal(decisionForPolicy("concurrent"), null);
    assert.equal(decisionForPolicy("follow_up"), decisionForPolicy("follow_up"));
    assert.deepEqual(decisionForPolicy("steer"), { action: "steer", reason: "BUB_ADMISSION=steer" });
  });
});

describe("channelOwnAdmission", () => {
  it("is null without a channel, or for a channel without a policy or without an answer", async () => {
    assert.equal(await channelOwnAdmission(undefined, "t:1", args.message, turn), null);
    assert.equal(await channelOwnAdmission({ name: "t", start: async () => {}, stop: async () => {}, send: async () => {} }, "t:1", args.message, turn), null);
    assert.equal(await channelOwnAdmission(new RecordingChannel("t"), "t:1", args.message, turn), null);
    const silent = { name: "t", start: async () => {}, stop: async () => {}, send: async () => {}, admitMessage: async () => undefined };
    assert.equal(await channelOwnAdmission(silent, "t:1", args.message, turn), null);
  });

  it("answers with the channel's decision, passing it the session, message and snapshot", async () => {
    const channel = new RecordingChannel("t");
    const seen: unknown[] = [];
    channel.policy = (snapshot) => (seen.push(snapshot), { action: "drop" });
    assert.deepEqual(await channelOwnAdmission(channel, "t:1", args.message, turn), { action: "drop" });
    assert.deepEqual(seen, [turn]);
  });
});
