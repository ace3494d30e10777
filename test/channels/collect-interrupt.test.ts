/**
 * The `collect` and `interrupt` admission modes: messages collected during a turn run as one
 * turn after it, in order; a message that interrupts cancels the running turn (its reason
 * naming the message), starts once that turn's pipeline has returned, and nothing the
 * cancelled turn still answers is sent.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { setImmediate as tick } from "node:timers/promises";
import { mergeCollected, TurnSuperseded } from "../../src/channels/collect-interrupt.ts";
import { channelAdmission, sharedQueueRefusal } from "../../src/channels/admission.ts";
import { ChannelMessage } from "../../src/channels/message.ts";
import { TurnAdmission } from "../../src/channels/turn-admission.ts";
import { TurnRunner } from "../../src/channels/turn-runner.ts";
import { channelSettings } from "../../src/builtin/settings.ts";
import { toEnvelope, type TurnLifespan } from "../../src/kernel/envelope.ts";
import { isAdmitDecision } from "../../src/kernel/types.ts";
import { captureLogs } from "../support/temp.ts";
import { admissionPlugin, gatedModel, message, RecordingChannel, running, testFramework } from "./support.ts";

function setup(action: "collect" | "interrupt") {
  const model = gatedModel();
  const bub = testFramework([model.plugin, admissionPlugin(() => ({ action }))]);
  const runner = new TurnRunner(bub);
  return { model, runner, admission: new TurnAdmission(bub, runner) };
}

/** A lifespan recording how its turn was settled. */
function recordingLifespan(outcomes: string[], name: string): TurnLifespan {
  return { enter: () => {}, exit: () => {}, settled: (outcome) => void outcomes.push(`${name}:${outcome}`) };
}

describe("admission collect", () => {
  it("starts a message at once when the session is idle", async () => {
    const { model, runner, admission } = setup("collect");
    await captureLogs(() => admission.admit(message("alone")));
    assert.equal(runner.snapshotOf("test:1").runningCount, 1);
    await model.callCount(1);
    model.calls[0]!.finish();
  });

  it("runs the messages that arrived during a turn as exactly one turn after it, in arrival order", async () => {
    const { model, runner, admission } = setup("collect");
    await captureLogs(async () => {
      await admission.admit(message("first"));
      await model.callCount(1);
      for (const content of ["two", "three", "four"]) await admission.admit(message(content));
      assert.deepEqual(runner.snapshotOf("test:1"), { sessionId: "test:1", isRunning: true, runningCount: 1, pendingCount: 3, steeringCount: 0 });
      model.calls[0]!.finish();
      await model.callCount(2);
      assert.deepEqual(model.prompts(), ["first", "two\nthree\nfour"]);
      // While the collected turn runs, new messages collect again, for the turn after it.
      await admission.admit(message("five"));
      model.calls[1]!.finish();
      await model.callCount(3);
      model.calls[2]!.finish();
      await tick();
    });
    assert.deepEqual(model.prompts(), ["first", "two\nthree\nfour", "five"]);
    assert.equal(runner.sessionCount, 0);
  });

  it("merges in order, keeping every media item and the last message's lifespan", () => {
    const outcomes: string[] = [];
    const image = (name: string) => ({ type: "image" as const, mimeType: "image/png", url: `https://example.test/${name}.png` });
    const parts = ["a", "b", "c"].map((content) => new ChannelMessage({ sessionId: "t:1", channel: "t", chatId: "1", content, media: [image(content)], lifespan: recordingLifespan(outcomes, content) }));
    const merged = mergeCollected(parts);
    assert.ok(merged instanceof ChannelMessage);
    assert.equal(merged.content, "a\nb\nc");
    assert.deepEqual(merged.media.map((item) => item.url), ["a", "b", "c"].map((name) => `https://example.test/${name}.png`));
    assert.equal(merged.context.collected_messages, 3);
    merged.lifespan?.settled?.("done");
    assert.deepEqual(outcomes, ["c:done"]);
    const plain = mergeCollected([toEnvelope({ channel: "p", content: "x", "acme.tag": 1 }), toEnvelope({ channel: "p", content: "y", "acme.tag": 2 })]);
    assert.equal(plain.content, "x\ny");
    assert.equal(plain["acme.tag"], 2);
    assert.equal(mergeCollected(parts.slice(0, 1)), parts[0], "one message stays itself");
  });

  it("forgets what was collected when the session is quit", async () => {
    const { model, runner, admission } = setup("collect");
    await captureLogs(async () => {
      await admission.admit(message("first"));
      await model.callCount(1);
      await admission.admit(message("later"));
      await runner.quit("test:1");
    });
    assert.equal(runner.sessionCount, 0);
    assert.deepEqual(model.prompts(), ["first"]);
  });
});

describe("admission interrupt", () => {
  it("cancels the running turn with a reason naming the new message, and starts the new one once the old has returned", async () => {
    const { model, runner, admission } = setup("interrupt");
    const outcomes: string[] = [];
    const first = message("first");
    first.lifespan = recordingLifespan(outcomes, "first");
    await captureLogs(async () => {
      await admission.admit(first);
      await model.callCount(1);
      await admission.admit(message("second"));
      const signal = model.calls[0]!.signal;
      assert.equal(signal.aborted, true);
      assert.ok(signal.reason instanceof TurnSuperseded);
      assert.match(String(signal.reason.message), /interrupted by a newer message in test:1: second/);
      // The cancelled turn has not returned yet: the new one waits for it (its tape comes first).
      await tick();
      assert.equal(model.calls.length, 1);
      assert.equal(runner.snapshotOf("test:1").runningCount, 1);
      model.calls[0]!.fail(signal.reason);
      await model.callCount(2);
      model.calls[1]!.finish();
      await tick();
    });
    assert.deepEqual(model.prompts(), ["first", "second"]);
    // An interrupted turn is over: a journal must not run it again after a restart.
    assert.deepEqual(outcomes, ["first:done"]);
  });

  it("runs only the newest of messages that interrupt one another before the first has returned", async () => {
    const { model, admission } = setup("interrupt");
    await captureLogs(async () => {
      await admission.admit(message("a"));
      await model.callCount(1);
      await admission.admit(message("b"));
      await admission.admit(message("c"));
      model.calls[0]!.finish("late answer");
      await model.callCount(2);
      model.calls[1]!.finish();
      await tick();
    });
    assert.deepEqual(model.prompts(), ["a", "c"]);
  });

  it("does not send what the interrupted turn still answers, through a plugin channel's own policy", async () => {
    const model = gatedModel();
    const channel = new RecordingChannel("test");
    channel.policy = (turn) => (turn.isRunning ? { action: "interrupt" } : null);
    const { manager, stop, done } = await running([model.plugin], { channel });
    const { logs } = await captureLogs(async () => {
      await manager.handleMessage(message("slow question"));
      await model.callCount(1);
      await manager.handleMessage(message("never mind"));
      // The model ignores the abort and answers anyway: that answer must not go out.
      model.calls[0]!.finish("stale answer");
      await model.callCount(2);
      model.calls[1]!.finish();
      await manager.idle();
    });
    assert.deepEqual(channel.sent.map((sent) => sent.content), ["done:never mind"]);
    assert.ok(logs.some((log) => /withheld an outbound of an interrupted turn session_id=test:1/.test(log.message)));
    stop.abort();
    await done;
  });
});

describe("collect and interrupt settings", () => {
  it("are BUB_ADMISSION policies and well-formed decisions", async () => {
    for (const policy of ["collect", "interrupt"] as const) {
      const bub = testFramework([], { BUB_ADMISSION: policy });
      bub.settings.register(channelSettings);
      await bub.settings.prepare();
      const args = { sessionId: "t:1", message: toEnvelope({ channel: "t", content: "x" }), turn: { sessionId: "t:1", isRunning: true, runningCount: 1, pendingCount: 0, steeringCount: 0 } };
      const decision = await channelAdmission(bub, undefined, args);
      assert.deepEqual(decision, { action: policy, reason: `BUB_ADMISSION=${policy}` });
      assert.ok(isAdmitDecision(decision));
      assert.match(sharedQueueRefusal(bub) ?? "", new RegExp(`^BUB_ADMISSION=${policy} does not work with the shared inbound queue \\(BUB_DATABASE_URL\\) — `));
    }
    const bub = testFramework([], { BUB_ADMISSION: "steer" });
    bub.settings.register(channelSettings);
    await bub.settings.prepare();
    assert.equal(sharedQueueRefusal(bub), null);
  });
});
