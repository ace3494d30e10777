import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { channelAdmission, channelOwnAdmission, decisionForPolicy } from "../../src/channels/admission.ts";
import { channelSettings } from "../../src/builtin/settings.ts";
import type { AdmitDecision, Channel } from "../../src/kernel/types.ts";
import { toEnvelope } from "../../src/kernel/envelope.ts";
import { RecordingChannel, testFramework } from "./support.ts";

const turn = { sessionId: "t:1", isRunning: true, runningCount: 1, pendingCount: 0, steeringCount: 0 };
const args = { sessionId: "t:1", message: toEnvelope({ channel: "t", content: "x" }), turn };

function router(answer: () => Promise<AdmitDecision | null>): Channel {
  const channel = new RecordingChannel("t");
  return Object.assign(channel, { admitMessage: answer });
}

describe("channelAdmission", () => {
  it("answers the BUB_ADMISSION policy without a channel", async () => {
    const bub = testFramework([], { BUB_ADMISSION: "steer" });
    assert.equal(await channelAdmission(bub, undefined, args), null, "no channels section loaded: concurrent");
    bub.settings.register(channelSettings);
    await bub.settings.prepare();
    assert.deepEqual(await channelAdmission(bub, undefined, args), { action: "steer", reason: "BUB_ADMISSION=steer" });
  });

  it("asks the message's channel, and falls back to the policy when it has no answer", async () => {
    const bub = testFramework([], { BUB_ADMISSION: "follow_up" });
    bub.settings.register(channelSettings);
    await bub.settings.prepare();
    assert.deepEqual(await channelAdmission(bub, router(async () => null), args), { action: "follow_up", reason: "BUB_ADMISSION=follow_up" });
    assert.deepEqual(await channelAdmission(bub, router(async () => ({ action: "drop", reason: "muted" })), args), { action: "drop", reason: "muted" });
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
