import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SeenIds } from "../../src/channels/seen-ids.ts";

describe("SeenIds", () => {
  it("groups ids by arrival time, oldest first, and reads them back", () => {
    let now = 100;
    const seen = new SeenIds({ now: () => now });
    seen.add(7);
    seen.add(3);
    now = 105;
    seen.add(9);
    seen.add(7, 200);
    assert.deepEqual(seen.toRuns(), [[100, 7, 3], [105, 9]], "an id keeps its first arrival");
    const copy = new SeenIds({ now: () => now });
    copy.addRuns(seen.toRuns());
    assert.deepEqual(copy.toRuns(), seen.toRuns());
    assert.deepEqual(seen.toRuns((id) => id !== 3), [[100, 7], [105, 9]]);
  });

  it("forgets ids older than the window, and the oldest beyond the cap", () => {
    let now = 1_000;
    const seen = new SeenIds({ now: () => now, keepSeconds: 10, max: 3 });
    for (const id of [1, 2, 3, 4]) seen.add(id);
    assert.deepEqual([1, 2, 3, 4].map((id) => seen.has(id)), [false, true, true, true]);
    now = 1_010;
    seen.add(5);
    seen.prune();
    assert.deepEqual([3, 4, 5].map((id) => seen.has(id)), [true, true, true], "ten seconds old: kept");
    now = 1_011;
    seen.prune();
    assert.deepEqual([3, 4, 5].map((id) => seen.has(id)), [false, false, true]);
  });

  it("skips what is not a run of whole numbers", () => {
    const seen = new SeenIds({ now: () => 0 });
    seen.addRuns([[5, 1, 2], "x", [6, "3"], [1.5, 4], null, [7]]);
    seen.addRuns({ not: "runs" });
    assert.deepEqual(seen.toRuns(), [[5, 1, 2]]);
  });
});
