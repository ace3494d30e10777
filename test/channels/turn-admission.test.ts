import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { TurnAdmission } from "../../src/channels/turn-admission.ts";
import { TurnRunner } from "../../src/channels/turn-runner.ts";
import { ChannelMessage } from "../../src/channels/message.ts";
import type { BubPlugin } from "../../src/kernel/hooks.ts";
import type { TurnSnapshot } from "../../src/kernel/types.ts";
import { toEnvelope } from "../../src/kernel/envelope.ts";
import { captureLogs } from "../support/temp.ts";
import { admissionPlugin, gatedModel, message, testFramework } from "./support.ts";

/** An admission over a runner and a gated model, with the given hooks. */
function setup(plugins: BubPlugin[] = []) {
  const model = gatedModel();
  const errors: string[] = [];
  const reporter: BubPlugin = { name: "errors", onError: ({ stage }) => void errors.push(stage) };
  const bub = testFramework([model.plugin, reporter, ...plugins]);
  const runner = new TurnRunner(bub);
  return { model, runner, errors, admission: new TurnAdmission(bub, runner) };
}

describe("TurnAdmission", () => {
  it("has started the turn when admission resolves, whether the hooks answer synchronously or not", async () => {
    for (const admitMessage of [() => ({ action: "process" as const }), async () => ({ action: "process" as const })]) {
      const { model, runner, admission } = setup([{ name: "policy", admitMessage }]);
      await admission.admit(message("now"));
      assert.equal(runner.snapshotOf("test:1").runningCount, 1);
      await model.callCount(1);
      model.calls[0]!.finish();
    }
  });

  it("files the message under the resolved session, writing it onto the message when it can", async () => {
    const { model, runner, admission } = setup([{ name: "session", resolveSession: () => "custom:1" }]);
    const channelMessage = message("a");
    const plain = toEnvelope({ channel: "test", chat_id: "1", content: "b" });
    const frozen = Object.freeze(toEnvelope({ channel: "test", chat_id: "1", session_id: "test:1", content: "c" }));
    for (const inbound of [channelMessage, plain, frozen]) await admission.admit(inbound);
    assert.equal(channelMessage.sessionId, "custom:1");
    assert.equal(plain.sessionId, "custom:1");
    assert.equal(frozen.sessionId, "test:1");
    assert.equal(runner.snapshotOf("custom:1").runningCount, 3);
    await model.callCount(3);
    model.calls.forEach((call) => call.finish());
  });

  it("shows admitMessage the session's snapshot", async () => {
    const seen: TurnSnapshot[] = [];
    const { model, admission } = setup([admissionPlugin((_content, turn) => (seen.push(turn), { action: "follow_up" }))]);
    await admission.admit(message("one"));
    await admission.admit(message("two"));
    await model.callCount(1);
    assert.deepEqual(seen, [
      { sessionId: "test:1", isRunning: false, runningCount: 0, pendingCount: 0, steeringCount: 0 },
      { sessionId: "test:1", isRunning: true, runningCount: 1, pendingCount: 0, steeringCount: 0 },
    ]);
    await captureLogs(() => model.finishInOrder(2));
  });

  it("forgets the session of a dropped message that had nothing else", async () => {
    const { runner, admission } = setup([admissionPlugin(() => ({ action: "drop", reason: "spam" }))]);
    const { logs } = await captureLogs(() => admission.admit(message("spam")));
    assert.equal(runner.sessionCount, 0);
    assert.ok(logs.some((log) => /admission drop session_id=test:1 reason=spam/.test(log.message)));
  });

  it("queues a steered message when no inbox can take it, and starts it when the session is idle", async () => {
    const { model, runner, admission } = setup([admissionPlugin(() => ({ action: "steer" }))]);
    await captureLogs(async () => {
      await admission.admit(message("idle"));
      await admission.admit(message("busy"));
    });
    assert.deepEqual(runner.snapshotOf("test:1"), { sessionId: "test:1", isRunning: true, runningCount: 1, pendingCount: 1, steeringCount: 0 });
    await captureLogs(() => model.finishInOrder(2));
    assert.deepEqual(model.prompts(), ["idle", "busy"]);
  });

  it("processes a message whose admission answer is malformed, and reports it", async () => {
    const { model, errors, admission } = setup([{ name: "bad", admitMessage: () => ({ action: "later" }) as never }]);
    await captureLogs(() => admission.admit(message("still runs")));
    await model.callCount(1);
    assert.deepEqual(errors, ["admit_message"]);
    model.calls[0]!.finish();
  });

  it("drops a message whose session cannot be resolved asynchronously, and reports it", async () => {
    const { model, runner, errors, admission } = setup([{ name: "bad", resolveSession: async () => Promise.reject(new Error("no session")) }]);
    await captureLogs(() => admission.admit(new ChannelMessage({ sessionId: "x", channel: "test", chatId: "1", content: "lost" })));
    assert.equal(runner.sessionCount, 0);
    assert.equal(model.calls.length, 0);
    assert.deepEqual(errors, ["resolve_session"]);
  });
});
