import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ChannelManager } from "../../src/channels/manager.ts";
import { InboundQueue } from "../../src/channels/inbound-queue.ts";
import type { Envelope } from "../../src/kernel/envelope.ts";
import type { BubPlugin } from "../../src/kernel/hooks.ts";
import { deferred, gatedModel, instantModel, message, running } from "./support.ts";

describe("ChannelManager admission order", () => {
  it("keeps arrival order when some admissions take a promise and others do not", async () => {
    const { seen, model } = instantModel();
    // Every third message's session and admission come back as promises.
    const slow = (content: string) => Number(content.slice(1)) % 3 === 0;
    const hooks: BubPlugin = {
      name: "mixed",
      resolveSession: ({ message }) => (slow(message.content) ? Promise.resolve(null) : null),
      admitMessage: ({ message }) => (slow(message.content) ? Promise.resolve({ action: "follow_up" as const }) : { action: "follow_up" as const }),
    };
    const { manager, stop, done } = await running([model, hooks]);
    const sends: Promise<void>[] = [];
    for (let index = 0; index < 6; index++) for (let chat = 0; chat < 4; chat++) sends.push(manager.handleMessage(message(`m${index}`, { chat: String(chat) })));
    await Promise.all(sends);
    await manager.idle();
    assert.equal(seen.size, 4);
    for (const prompts of seen.values()) assert.deepEqual(prompts, ["m0", "m1", "m2", "m3", "m4", "m5"]);
    stop.abort();
    await done;
  });

  it("queues a message handed in by a hook during admission behind the one being admitted", async () => {
    const model = gatedModel();
    let manager!: ChannelManager;
    let injected: Promise<void> | undefined;
    const reentrant: BubPlugin = {
      name: "reentrant",
      admitMessage: ({ message: inbound }) => {
        if (!injected && inbound.content === "first") injected = manager.handleMessage(message("second"));
        return { action: "follow_up" };
      },
    };
    const started = await running([model.plugin, reentrant]);
    manager = started.manager;
    await manager.handleMessage(message("first"));
    await injected;
    await model.callCount(1);
    assert.equal(manager.snapshot("test:1").pendingCount, 1);
    await model.finishInOrder(2);
    await manager.idle();
    assert.deepEqual(model.prompts(), ["first", "second"]);
    started.stop.abort();
    await started.done;
  });

});

describe("InboundQueue", () => {
  /** A queue whose admissions are recorded; `slow` contents wait for the promise the test resolves. */
  function setup(slow: Map<string, Promise<void>> = new Map()) {
    const admitted: string[] = [];
    let idleCalls = 0;
    const queue = new InboundQueue(
      {
        async admit(envelope: Envelope) {
          admitted.push(envelope.content);
          await slow.get(envelope.content);
        },
      },
      () => void idleCalls++,
    );
    return { queue, admitted, idleCalls: () => idleCalls };
  }

  it("holds messages until started, then admits them in arrival order", async () => {
    const { queue, admitted, idleCalls } = setup();
    const first = queue.take(message("one"));
    queue.enqueue(message("two"), null);
    const third = queue.take(message("three"));
    await new Promise<void>((resolve) => setImmediate(resolve));
    assert.deepEqual(admitted, []);
    assert.equal(queue.idle, false);
    queue.start();
    await Promise.all([first, third]);
    assert.deepEqual(admitted, ["one", "two", "three"]);
    assert.equal(queue.idle, true);
    assert.equal(idleCalls(), 1);
  });

  it("resolves take once its message is admitted", async () => {
    const { queue, admitted } = setup();
    queue.start();
    await queue.take(message("now"));
    assert.deepEqual(admitted, ["now"]);
    assert.equal(queue.idle, true);
  });

  it("waits for an admission to finish before admitting the next message", async () => {
    const gate = deferred();
    const { queue, admitted } = setup(new Map([["slow", gate.promise]]));
    queue.start();
    const slow = queue.take(message("slow"));
    const fast = queue.take(message("fast"));
    await new Promise<void>((resolve) => setImmediate(resolve));
    assert.deepEqual(admitted, ["slow"]);
    assert.equal(queue.idle, false);
    gate.resolve();
    await Promise.all([slow, fast]);
    assert.deepEqual(admitted, ["slow", "fast"]);
    assert.equal(queue.idle, true);
  });

  it("admits a message taken during an admission only after that admission finished", async () => {
    const events: string[] = [];
    let inner: Promise<void> | undefined;
    const queue: InboundQueue = new InboundQueue(
      {
        async admit(envelope: Envelope) {
          const content = envelope.content;
          events.push(`admit ${content}`);
          if (content === "outer") inner = queue.take(message("inner"));
          await Promise.resolve();
          events.push(`return ${content}`);
        },
      },
      () => {},
    );
    queue.start();
    await queue.take(message("outer"));
    await inner;
    assert.deepEqual(events, ["admit outer", "return outer", "admit inner", "return inner"]);
  });
});
