import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { ChannelManager } from "../../src/channels/manager.ts";
import { InboundQueue } from "../../src/channels/inbound-queue.ts";
import { contentOf, type Envelope } from "../../src/kernel/envelope.ts";
import type { BubPlugin } from "../../src/kernel/hooks.ts";
import { deferred, gatedModel, instantModel, message, running } from "./support.ts";

describe("ChannelManager admission order", () => {
  it("keeps arrival order when some admissions take a promise and others do not", async () => {
    const { seen, model } = instantModel();
    // Every third message's session and admission come back as promises.
    const slow = (content: string) => Number(content.slice(1)) % 3 === 0;
    const hooks: BubPlugin = {
      name: "mixed",
      resolveSession: ({ message }) => (slow(contentOf(message)) ? Promise.resolve(null) : null),
      admitMessage: ({ message }) => (slow(contentOf(message)) ? Promise.resolve({ action: "follow_up" as const }) : { action: "follow_up" as const }),
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
    let injected = false;
    const reentrant: BubPlugin = {
      name: "reentrant",
      admitMessage: ({ message: inbound }) => {
        if (!injected && contentOf(inbound) === "first") {
          injected = true;
          void manager.handleMessage(message("second"));
        }
        return { action: "follow_up" };
      },
    };
    const started = await running([model.plugin, reentrant]);
    manager = started.manager;
    await manager.handleMessage(message("first"));
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
  /** A queue whose admissions are recorded; `slow` contents take the promise the test resolves. */
  function setup(slow: Map<string, Promise<void>> = new Map()) {
    const admitted: string[] = [];
    let idleCalls = 0;
    const queue = new InboundQueue(
      {
        admit(envelope: Envelope) {
          admitted.push(contentOf(envelope));
          return slow.get(contentOf(envelope));
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
    assert.deepEqual(admitted, []);
    assert.equal(queue.idle, false);
    queue.start();
    assert.deepEqual(admitted, ["one", "two", "three"]);
    await Promise.all([first, third]);
    assert.equal(queue.idle, true);
    assert.equal(idleCalls(), 1);
  });

  it("admits a message with nothing ahead of it at once", async () => {
    const { queue, admitted } = setup();
    queue.start();
    const taken = queue.take(message("now"));
    assert.deepEqual(admitted, ["now"], "admitted before take returned");
    assert.equal(queue.idle, true);
    await taken;
  });

  it("waits for an admission that takes a promise before admitting the next message", async () => {
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

  it("admits a message taken during an admission only after that admission returned", () => {
    const events: string[] = [];
    let queue!: InboundQueue;
    queue = new InboundQueue(
      {
        admit(envelope: Envelope) {
          const content = contentOf(envelope);
          events.push(`admit ${content}`);
          if (content === "outer") void queue.take(message("inner"));
          events.push(`return ${content}`);
          return undefined;
        },
      },
      () => {},
    );
    queue.start();
    void queue.take(message("outer"));
    assert.deepEqual(events, ["admit outer", "return outer", "admit inner", "return inner"]);
  });
});
