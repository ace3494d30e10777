import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { builtinAdmission, decisionForPolicy } from "../../src/channels/admission.ts";
import { channelSettings } from "../../src/builtin/settings.ts";
import type { AdmitDecision, ChannelRouter } from "../../src/kernel/types.ts";
import { testFramework } from "./support.ts";

const turn = { sessionId: "t:1", isRunning: true, runningCount: 1, pendingCount: 0, steeringCount: 0 };
const args = { sessionId: "t:1", message: { channel: "t", content: "x" }, turn };

function router(answer: () => Promise<AdmitDecision | null>): ChannelRouter {
  return { dispatchOutput: async () => true, wrapStream: (_message, stream) => stream, quit: async () => {}, admitChannelMessage: answer };
}

describe("builtinAdmission", () => {
  it("answers the BUB_ADMISSION policy synchronously without a router", async () => {
    const bub = testFramework([], { BUB_ADMISSION: "steer" });
    assert.equal(builtinAdmission(bub, args), null, "no channels section loaded: concurrent");
    bub.settings.register(channelSettings);
    await bub.settings.prepare();
    assert.deepEqual(builtinAdmission(bub, args), { action: "steer", reason: "BUB_ADMISSION=steer" });
  });

  it("asks a router that only offers a promise, and falls back to the policy when it has no answer", async () => {
    const bub = testFramework([], { BUB_ADMISSION: "follow_up" });
    bub.settings.register(channelSettings);
    await bub.settings.prepare();
    bub.bindChannelRouter(router(async () => null));
    const fallback = builtinAdmission(bub, args);
    assert.ok(fallback instanceof Promise);
    assert.deepEqual(await fallback, { action: "follow_up", reason: "BUB_ADMISSION=follow_up" });
    bub.bindChannelRouter(router(async () => ({ action: "drop", reason: "muted" })));
    assert.deepEqual(await builtinAdmission(bub, args), { action: "drop", reason: "muted" });
  });

  it("has one decision per policy", () => {
    assert.equal(decisionForPolicy("concurrent"), null);
    assert.equal(decisionForPolicy("follow_up"), decisionForPolicy("follow_up"));
    assert.deepEqual(decisionForPolicy("steer"), { action: "steer", reason: "BUB_ADMISSION=steer" });
  });
});
