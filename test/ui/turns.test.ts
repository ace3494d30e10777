import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TapeEntry } from "../../src/kernel/tape-contract.ts";
import { groupTimeline, pageStart, turnDurationMs, turnUsage } from "../../src/ui/turns.ts";

let nextId = 1;
function entry(kind: string, payload: Record<string, unknown>, meta: Record<string, unknown> = {}, date = "2026-01-02T03:04:05.000000+00:00"): TapeEntry {
  return { id: nextId++, kind, payload, meta, date };
}
const event = (name: string, data: Record<string, unknown> = {}, meta = {}, date?: string) => entry("event", { name, data }, meta, date);

describe("a tape as a timeline", () => {
  it("breaks at anchors (with their handoff event) and starts a turn at each loop.start; entries before a turn stand alone", () => {
    nextId = 1;
    const tape = [
      entry("anchor", { name: "session/start" }),
      event("handoff"),
      event("loop.start"),
      entry("message", { role: "user", content: "hi" }),
      event("loop.start"),
      entry("message", { role: "assistant", content: "yo" }),
      entry("anchor", { name: "phase/2" }),
      entry("message", { role: "user", content: "after" }),
    ];
    const blocks = groupTimeline(tape);
    assert.deepEqual(
      blocks.map((block) => [block.type, block.from, block.type === "turn" ? block.title : null]),
      [["anchor", 1, null], ["turn", 3, "turn"], ["turn", 5, "turn"], ["anchor", 7, null], ["turn", 8, "entries"]],
    );
    assert.equal(blocks[0]!.type === "anchor" && blocks[0]!.handoff?.id, 2, "the handoff event goes with its anchor");
  });

  it("starts a new turn where meta.turn_id changes, and goes on with a turn after an anchor", () => {
    nextId = 1;
    const tape = [
      entry("anchor", { name: "session/start" }, { turn_id: "a" }),
      event("handoff", {}, { turn_id: "a" }),
      event("loop.start", {}, { turn_id: "a" }),
      entry("message", { role: "user" }, { turn_id: "a" }),
      entry("anchor", { name: "phase/2" }, { turn_id: "a" }),
      entry("message", { role: "assistant" }, { turn_id: "a" }),
      entry("message", { role: "user" }, { turn_id: "b" }),
      entry("message", { role: "assistant" }, { turn_id: "a" }),
    ];
    assert.deepEqual(
      groupTimeline(tape).map((block) => [block.from, block.type === "turn" ? block.title : "anchor"]),
      [[1, "anchor"], [3, "turn"], [5, "anchor"], [6, "continued"], [7, "turn"], [8, "continued"]],
    );
  });

  it("sums the usage of a turn's run events and measures it from first to last entry", () => {
    nextId = 1;
    const turn = [
      event("loop.start", {}, {}, "2026-01-02T03:04:05.000000+00:00"),
      event("run", { usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } }),
      event("run", { usage: { input_tokens: 20, output_tokens: 3 } }),
      event("loop.step", {}, {}, "2026-01-02T03:04:06.250000+00:00"),
    ];
    assert.deepEqual(turnUsage(turn), { prompt: 30, completion: 5, total: 35 });
    assert.equal(turnUsage(turn.slice(0, 1)), null);
    assert.equal(turnDurationMs(turn), 1250);
  });

  it("starts a page at a turn boundary when one is within the page", () => {
    nextId = 1;
    const tape = [event("loop.start"), entry("message", {}), entry("message", {}), event("loop.start"), entry("message", {}), entry("message", {})];
    assert.equal(pageStart(tape, 6, 4), 3, "moved forwards from index 2 to the turn at index 3");
    assert.equal(pageStart(tape, 6, 10), 0);
    assert.equal(pageStart(tape, 3, 2), 1, "no turn start in reach: the page starts where the size says");
    nextId = 1;
    const withIds = [entry("message", {}, { turn_id: "a" }), entry("message", {}, { turn_id: "a" }), entry("message", {}, { turn_id: "b" }), entry("message", {}, { turn_id: "b" })];
    assert.equal(pageStart(withIds, 4, 3), 2, "a change of turn id starts a turn");
  });
});
