import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { graceExpired, stopChannels } from "../../src/channels/shutdown.ts";
import { captureLogs } from "../support/temp.ts";
import { admissionPlugin, deferred, gatedModel, message, RecordingChannel, running } from "./support.ts";

describe("ChannelManager quit and shutdown", () => {
  it("quit cancels a session's running turns and forgets its pending messages", async () => {
    const model = gatedModel();
    const { manager, stop, done } = await running([model.plugin, admissionPlugin(() => ({ action: "follow_up" }))]);
    await manager.handleMessage(message("long"));
    await model.callCount(1);
    await manager.handleMessage(message("queued"));
    await captureLogs(() => manager.quit("test:1"));
    assert.equal(model.calls[0]!.signal?.aborted, true);
    await manager.idle();
    assert.deepEqual(model.prompts(), ["long"]);
    assert.deepEqual(manager.snapshot("test:1"), { sessionId: "test:1", isRunning: false, runningCount: 0, pendingCount: 0, steeringCount: 0 });
    stop.abort();
    await done;
  });

  it("stops taking messages, lets running turns finish and deliver, then stops channels", async () => {
    const model = gatedModel();
    const { manager, channel, done } = await running([model.plugin]);
    await manager.handleMessage(message("working"));
    await model.callCount(1);
    const shutdown = manager.shutdown();
    assert.equal(channel.startSignal?.aborted, true, "channels are told to stop taking messages");
    await captureLogs(() => manager.handleMessage(message("too late")));
    model.calls[0]!.finish("finished");
    await shutdown;
    await done;
    assert.deepEqual(model.prompts(), ["working"]);
    assert.deepEqual(channel.events, ["start", "send:finished", "stop"]);
  });

  it("runs admitted follow-ups during the grace period", async () => {
    const model = gatedModel();
    const { manager, done } = await running([model.plugin, admissionPlugin(() => ({ action: "follow_up" }))]);
    await manager.handleMessage(message("one"));
    await model.callCount(1);
    await manager.handleMessage(message("two"));
    const shutdown = manager.shutdown();
    await model.finishInOrder(2);
    await shutdown;
    await done;
    assert.deepEqual(model.prompts(), ["one", "two"]);
  });

  it("cancels turns still running when the grace period ends", async () => {
    const model = gatedModel();
    const { manager, channel, done } = await running([model.plugin], { graceSeconds: 0 });
    await manager.handleMessage(message("stuck"));
    await model.callCount(1);
    const { logs } = await captureLogs(() => manager.shutdown());
    await done;
    assert.equal(model.calls[0]!.signal?.aborted, true);
    assert.ok(logs.some((log) => /cancelled 1 in-flight tasks/.test(log.message)));
    assert.deepEqual(channel.events, ["start", "stop"]);
  });
});

describe("graceExpired", () => {
  it("is false when everything went idle within the grace period", async () => {
    assert.equal(await graceExpired(Promise.resolve(), 60_000), false);
    const idle = deferred();
    const expired = graceExpired(idle.promise, 60_000);
    idle.resolve();
    assert.equal(await expired, false);
  });

  it("is true when the grace period ran out first", async () => {
    assert.equal(await graceExpired(new Promise<void>(() => {}), 0), true);
    assert.equal(await graceExpired(deferred().promise, 5), true);
  });
});

describe("stopChannels", () => {
  it("stops the channels one after another, in the given order", async () => {
    const order: string[] = [];
    const slow = new RecordingChannel("slow");
    slow.stop = async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      order.push("slow");
    };
    const fast = new RecordingChannel("fast");
    fast.stop = async () => void order.push("fast");
    await stopChannels([slow, fast]);
    assert.deepEqual(order, ["slow", "fast"]);
  });

  it("logs a channel that fails to stop and still stops the others", async () => {
    const broken = new RecordingChannel("broken");
    broken.stop = async () => {
      throw new Error("stuck socket");
    };
    const fine = new RecordingChannel("fine");
    const { logs } = await captureLogs(() => stopChannels([broken, fine]));
    assert.deepEqual(fine.events, ["stop"]);
    assert.ok(logs.some((log) => log.level === "error" && /failed to stop channel 'broken'/.test(log.message)));
  });
});
