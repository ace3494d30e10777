import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TurnSlots } from "../../src/channels/turn-slots.ts";

describe("TurnSlots", () => {
  it("hands out up to its limit, then queues starts in arrival order", () => {
    const slots = new TurnSlots(2);
    const started: string[] = [];
    assert.equal(slots.acquire(() => started.push("a")), true);
    assert.equal(slots.acquire(() => started.push("b")), true);
    assert.equal(slots.acquire(() => started.push("c")), false);
    assert.equal(slots.acquire(() => started.push("d")), false);
    slots.release();
    assert.deepEqual(started, ["c"]);
    slots.release();
    assert.deepEqual(started, ["c", "d"]);
    // Two slots held (c and d): a release now frees one for the next taker.
    slots.release();
    assert.equal(slots.acquire(() => started.push("e")), true);
    assert.equal(slots.acquire(() => started.push("f")), false);
  });

  it("has no bound with a limit of 0", () => {
    const slots = new TurnSlots(0);
    for (let index = 0; index < 1000; index++) assert.equal(slots.acquire(() => assert.fail("never queued")), true);
  });
});
