import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { emptySessionTurns, RunningTurns, TurnTask } from "../../src/channels/session-turns.ts";
import { testTurnContext } from "../support/framework.ts";
import { captureLogs } from "../support/temp.ts";
import { admissionPlugin, gatedModel, message, running } from "./support.ts";

describe("RunningTurns", () => {
  const turns = emptySessionTurns("s");
  const tasks = ["a", "b", "c"].map((content) => new TurnTask(message(content), turns));

  it("keeps turns in start order whichever one ends", () => {
    const running = new RunningTurns();
    assert.equal(running.size, 0);
    assert.deepEqual(running.toArray(), []);
    for (const task of tasks) running.add(task);
    assert.equal(running.size, 3);
    running.delete(tasks[0]!);
    assert.deepEqual(running.toArray(), [tasks[1], tasks[2]]);
    running.add(tasks[0]!);
    running.delete(tasks[2]!);
    assert.deepEqual(running.toArray(), [tasks[1], tasks[0]]);
    running.delete(tasks[2]!);
    assert.equal(running.size, 2, "deleting one that is not there changes nothing");
    running.delete(tasks[1]!);
    running.delete(tasks[0]!);
    assert.equal(running.size, 0);
  });

  it("counts only the turns not cancelled as live", () => {
    const running = new RunningTurns();
    const [first, second] = ["x", "y"].map((content) => new TurnTask(message(content), turns));
    running.add(first!);
    running.add(second!);
    assert.equal(running.liveCount(), 2);
    first!.cancelled = true;
    assert.equal(running.liveCount(), 1);
    assert.equal(running.size, 2);
  });
});

describe("TurnTask", () => {
  it("ends once, settling done for whoever waits", async () => {
    const task = new TurnTask(message("x"), emptySessionTurns("s"));
    let settled = false;
    const done = task.done.then(() => (settled = true));
    await Promise.resolve();
    assert.equal(settled, false);
    assert.equal(task.end(), true);
    assert.equal(task.end(), false, "already ended");
    await done;
    assert.equal(task.ended, true);
    await task.done;
  });

  it("aborts its signal with the reason, made on demand", () => {
    const early = new TurnTask(message("x"), emptySessionTurns("s"));
    const signal = early.signal;
    assert.equal(signal, early.signal);
    early.abort(new Error("stop"));
    assert.equal(signal.aborted, true);
    const late = new TurnTask(message("y"), emptySessionTurns("s"));
    late.abort("gone");
    assert.equal(late.signal.aborted, true);
    assert.equal(late.signal.reason, "gone");
  });
});

describe("which turn a context belongs to", () => {
  it("is the task whose message or signal the context carries, never one without a context", () => {
    const task = new TurnTask(message("x"), emptySessionTurns("s"));
    const other = new TurnTask(message("y"), emptySessionTurns("s"));
    const byMessage = { ...testTurnContext(), message: task.message };
    assert.equal(task.runs(byMessage), true);
    assert.equal(other.runs(byMessage), false);
    const bySignal = testTurnContext({ signal: other.signal });
    assert.equal(other.runs(bySignal), true, "a subagent's context keeps the turn's signal");
    assert.equal(task.runs(bySignal), false);
    assert.equal(task.runs(undefined), false);
  });
});

describe("a turn's signal", () => {
  it("spares the turn that asks to quit (its context in quitSession) and forgets what waits", async () => {
    const model = gatedModel();
    const { manager, stop, done } = await running([model.plugin, admissionPlugin(() => ({ action: "follow_up" }))]);
    for (const content of ["one", "two"]) await manager.handleMessage(message(content));
    await model.callCount(1);
    const asking = model.calls[0]!;
    assert.equal(asking.context.message?.content, "one", "the turn's context names its message");
    await captureLogs(() => manager.framework.runtime.call("quitSession", { sessionId: "test:1", context: asking.context }));
    assert.equal(asking.signal.aborted, false, "the asking turn goes on");
    asking.finish();
    await manager.idle();
    assert.deepEqual(model.prompts(), ["one"], "quit forgot the waiting one");
    stop.abort();
    await done;
  });

  it("gives every follow-up turn its own signal in the hook arguments; quit aborts the running one", async () => {
    const model = gatedModel();
    const { manager, stop, done } = await running([model.plugin, admissionPlugin(() => ({ action: "follow_up" }))]);
    for (const content of ["one", "two", "three"]) await manager.handleMessage(message(content));
    await model.callCount(1);
    model.calls[0]!.finish();
    await model.callCount(2);
    await captureLogs(() => manager.quit("test:1"));
    await manager.idle();
    assert.deepEqual(model.prompts(), ["one", "two"], "quit forgot the third");
    const [first, second] = model.calls.map((call) => call.signal);
    assert.ok(first && second && first !== second);
    assert.equal(first.aborted, false, "the finished turn was not cancelled");
    assert.equal(second.aborted, true, "the running follow-up was");
    stop.abort();
    await done;
  });
});
