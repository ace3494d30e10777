import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { TurnRunner } from "../../src/channels/turn-runner.ts";
import { steeringTargetOf } from "../../src/channels/steering.ts";
import { channelSettings } from "../../src/builtin/settings.ts";
import { TurnInterrupted } from "../../src/agent/interrupt.ts";
import type { BubFramework } from "../../src/kernel/framework.ts";
import { captureLogs } from "../support/temp.ts";
import { deferred, gatedModel, message, steeringPlugin, testFramework } from "./support.ts";

/** A runner over a gated model; `settled()` resolves the next time a session has nothing more to run. */
function setup(options: { steering?: boolean; streamOutput?: boolean; env?: NodeJS.ProcessEnv } = {}) {
  const model = gatedModel();
  const bub = testFramework(options.steering ? [model.plugin, steeringPlugin] : [model.plugin], options.env);
  let onSettled = deferred();
  const runner = new TurnRunner(bub, {
    streamOutput: options.streamOutput,
    onSettled: () => onSettled.resolve(),
  });
  const settled = () => {
    const waiting = onSettled;
    return waiting.promise.then(() => void (onSettled = deferred()));
  };
  return { bub, model, runner, settled };
}

/** A channel counting the streams it is handed to show: those of the turns the runner started streaming (as the channel manager's plugin does). */
function countingRouter(bub: BubFramework, runner: TurnRunner): { wrapped: () => number } {
  let wrapped = 0;
  bub.runtime.register(
    {
      name: "counting",
      async runModelStream(args, next) {
        const stream = await next();
        if (stream && runner.streamingMessage(args.signal)) wrapped++;
        return stream;
      },
    },
    "counting",
  );
  return { wrapped: () => wrapped };
}

describe("TurnRunner", () => {
  it("starts the session's pending messages one by one once its turn ends, then forgets it", async () => {
    const { model, runner, settled } = setup();
    const turns = runner.sessionTurns("test:1");
    runner.schedule(turns, message("a"));
    turns.pending.push(message("b"));
    await model.callCount(1);
    assert.deepEqual(runner.snapshotOf("test:1"), { sessionId: "test:1", isRunning: true, runningCount: 1, pendingCount: 1, steeringCount: 0 });
    const done = settled();
    await model.finishInOrder(2);
    await done;
    assert.deepEqual(model.prompts(), ["a", "b"]);
    assert.equal(runner.sessionCount, 0);
  });

  it("re-registers a session that was forgotten between admission and its start", async () => {
    const { model, runner, settled } = setup();
    const turns = runner.sessionTurns("test:1");
    runner.dropIfIdle(turns);
    assert.equal(runner.sessionCount, 0);
    runner.schedule(turns, message("late"));
    assert.equal(runner.sessionCount, 1);
    await model.callCount(1);
    assert.equal(runner.snapshotOf("test:1").runningCount, 1);
    const done = settled();
    model.calls[0]!.finish();
    await done;
  });

  it("keeps a session with pending messages, and forgets an idle one", () => {
    const { runner } = setup();
    const turns = runner.sessionTurns("test:1");
    assert.equal(runner.sessionTurns("test:1"), turns);
    turns.pending.push(message("waiting"));
    runner.dropIfIdle(turns);
    assert.equal(runner.sessionCount, 1);
    turns.pending.length = 0;
    runner.dropIfIdle(turns);
    assert.equal(runner.sessionCount, 0);
    assert.notEqual(runner.sessionTurns("test:1"), turns);
  });

  it("runs the steering a turn left unread before the session's pending messages", async () => {
    const { bub, model, runner, settled } = setup({ steering: true });
    await bub.running(async ({ steeringInbox }) => {
      const turns = runner.sessionTurns("test:1");
      const target = steeringTargetOf("test:1", message("", { thread: "t-1" }));
      runner.schedule(turns, message("first", { thread: "t-1" }));
      turns.pending.push(message("pending"));
      await model.callCount(1);
      steeringInbox!.enqueueMessage(message("steered", { thread: "t-1" }), target);
      assert.equal(runner.snapshot(turns, target).steeringCount, 1);
      assert.equal(runner.snapshot(turns, { sessionId: "test:1" }).steeringCount, 0, "filed under the thread, not the session");
      const done = settled();
      await captureLogs(() => model.finishInOrder(3));
      await done;
    });
    assert.deepEqual(model.prompts(), ["first", "steered", "pending"]);
  });

  it("quit cancels the session's turns and forgets its pending messages", async () => {
    const { model, runner } = setup();
    const turns = runner.sessionTurns("test:1");
    runner.schedule(turns, message("a"));
    runner.schedule(turns, message("b"));
    turns.pending.push(message("never"));
    await model.callCount(2);
    await captureLogs(() => runner.quit("test:1"));
    assert.deepEqual(model.calls.map((call) => call.signal?.aborted), [true, true]);
    assert.equal(runner.sessionCount, 0);
    assert.deepEqual(model.prompts(), ["a", "b"]);
    await runner.quit("unknown");
  });

  it("cancelAll cancels every running turn and reports the pending messages it drops", async () => {
    const { model, runner } = setup();
    const one = runner.sessionTurns("test:1");
    runner.schedule(one, message("a", { chat: "1" }));
    one.pending.push(message("left", { chat: "1" }));
    runner.schedule(runner.sessionTurns("test:2"), message("b", { chat: "2" }));
    await model.callCount(2);
    const { result, logs } = await captureLogs(() => runner.cancelAll());
    assert.equal(result, 2);
    assert.ok(logs.some((log) => log.level === "warn" && /1 pending message\(s\) not run session_id=test:1/.test(log.message)));
    assert.ok(model.calls.every((call) => call.signal?.aborted));
    assert.equal(runner.sessionCount, 0);
    runner.clear();
  });

  it("tells a message's lifespan how its turn ended: done (also after a failure) or cancelled", async () => {
    const { model, runner } = setup();
    const outcomes: string[] = [];
    const tracked = (content: string, chat: string) => {
      const made = message(content, { chat });
      made.lifespan = { enter: () => {}, exit: () => {}, settled: (outcome) => void outcomes.push(`${content}:${outcome}`) };
      return made;
    };
    runner.schedule(runner.sessionTurns("test:1"), tracked("ok", "1"));
    runner.schedule(runner.sessionTurns("test:2"), tracked("failing", "2"));
    runner.schedule(runner.sessionTurns("test:3"), tracked("cut", "3"));
    await model.callCount(3);
    model.calls[0]!.finish();
    await captureLogs(async () => {
      model.calls[1]!.fail(new Error("model down"));
      await new Promise((resolve) => setTimeout(resolve, 10));
      const cancelling = runner.cancelAll();
      model.calls[2]!.fail(Object.assign(new Error("aborted"), { name: "AbortError" }));
      await cancelling;
      await new Promise((resolve) => setTimeout(resolve, 10));
    });
    assert.deepEqual(outcomes.sort(), ["cut:cancelled", "failing:done", "ok:done"]);
    runner.clear();
  });

  it("interruptAll cancels every running turn with the reason and resolves once their pipelines have returned", async () => {
    const { model, runner } = setup();
    const turns = runner.sessionTurns("test:1");
    runner.schedule(turns, message("a"));
    turns.pending.push(message("never"));
    await model.callCount(1);
    const reason = new TurnInterrupted("SIGTERM");
    let returned = false;
    const interrupting = captureLogs(() => runner.interruptAll(reason)).then((captured) => ((returned = true), captured));
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(model.calls[0]!.signal?.reason, reason, "the turn's signal aborts with the reason");
    assert.equal(returned, false, "it waits for the cancelled turn's pipeline (which writes the tape) to return");
    model.calls[0]!.fail(reason);
    const { result } = await interrupting;
    assert.equal(result, 1);
    assert.deepEqual(model.prompts(), ["a"], "the pending message is dropped");
    assert.equal(runner.sessionCount, 0);
  });

  it("streams a turn's output when told to, else as the stream_output setting says, read per turn", async () => {
    for (const [options, expected] of [
      [{ streamOutput: true }, 1],
      [{ streamOutput: false, env: { BUB_STREAM_OUTPUT: "true" } }, 0],
      [{ env: { BUB_STREAM_OUTPUT: "true" } }, 1],
      [{}, 0],
    ] as const) {
      const { bub, model, runner, settled } = setup(options);
      const router = countingRouter(bub, runner);
      bub.settings.register(channelSettings);
      await bub.settings.prepare();
      runner.schedule(runner.sessionTurns("test:1"), message("x"));
      await model.callCount(1);
      const done = settled();
      model.calls[0]!.finish();
      await done;
      assert.equal(router.wrapped(), expected, JSON.stringify(options));
    }
  });
});
