import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { InFlightTurns } from "../../../src/channels/cli/in-flight.ts";
import { toEnvelope } from "../../../src/kernel/envelope.ts";

/** Turns whose every change is recorded as the busy state it reported. */
function setup() {
  const changes: boolean[] = [];
  const turns = new InFlightTurns((busy) => void changes.push(busy));
  return { turns, changes };
}

describe("InFlightTurns", () => {
  it("is busy from a submission until its turn ends, and releases whenIdle then", async () => {
    const { turns, changes } = setup();
    await turns.whenIdle();
    const message = toEnvelope({ content: "a" });
    turns.submitted(message);
    assert.equal(turns.busy, true);
    let idle = false;
    const waiting = turns.whenIdle().then(() => (idle = true));
    turns.submitted(message);
    turns.ended(message);
    await waiting;
    assert.equal(idle, true);
    assert.equal(turns.busy, false);
    assert.deepEqual(changes, [true, true, false]);
  });

  it("tells onChange before it releases whoever waits for idle", async () => {
    const order: string[] = [];
    const turns = new InFlightTurns((busy) => void order.push(`change ${busy}`));
    turns.submitted(toEnvelope({}));
    const waiting = turns.whenIdle().then(() => void order.push("idle"));
    turns.failed();
    await waiting;
    assert.deepEqual(order, ["change true", "change false", "idle"]);
  });

  it("closing a stream ends its turn, else the oldest submitted one", () => {
    const { turns } = setup();
    const [first, second, streamed] = [toEnvelope("1"), toEnvelope("2"), toEnvelope("3")];
    turns.submitted(first);
    turns.submitted(second);
    const own = turns.openStream(streamed);
    turns.closeStream(own);
    assert.equal(turns.busy, true, "the stream's message was not one of the submitted turns");
    const again = turns.openStream(second);
    turns.closeStream(again);
    assert.equal(turns.busy, false);
  });

  it("interrupt aborts live streams, forgets submitted turns and says whether a stream was live", () => {
    const { turns, changes } = setup();
    const heard: boolean[] = [];
    turns.submitted(toEnvelope({}));
    turns.interrupt((hadStreams) => {
      heard.push(hadStreams);
      assert.equal(changes.at(-1), true, "announced before the change");
    });
    const stream = turns.openStream(toEnvelope({}));
    turns.interrupt((hadStreams) => heard.push(hadStreams));
    assert.deepEqual(heard, [false, true]);
    assert.equal(stream.controller.signal.aborted, true);
    assert.equal(turns.busy, true, "the aborted stream is live until it closes");
    turns.closeStream(stream);
    assert.equal(turns.busy, false);
  });

  it("a failure forgets submitted turns only while no stream is live", () => {
    const { turns } = setup();
    turns.submitted(toEnvelope({}));
    const stream = turns.openStream(toEnvelope({}));
    turns.failed();
    turns.abortStreams();
    assert.equal(stream.controller.signal.aborted, true);
    turns.closeStream(stream);
    assert.equal(turns.busy, false, "closing the stream ended the oldest submitted turn");
    turns.submitted(toEnvelope({}));
    turns.failed();
    assert.equal(turns.busy, false);
  });
});
