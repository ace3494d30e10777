import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { RecentSet } from "../../src/kernel/recent-set.ts";

describe("RecentSet", () => {
  it("never keeps more than its bound, however many keys it is given", () => {
    const keys = new RecentSet<string>(100);
    for (let index = 0; index < 10_000; index++) {
      keys.add(`tape-${index}`);
      assert.ok(keys.size <= 100);
    }
    assert.equal(keys.size, 100);
    assert.equal(keys.has("tape-9999"), true);
    assert.equal(keys.has("tape-9900"), true);
    assert.equal(keys.has("tape-9899"), false, "the least recent are forgotten");
  });

  it("forgets the least recently used key: has and add refresh a key", () => {
    const keys = new RecentSet<string>(3);
    keys.add("a").add("b").add("c");
    assert.equal(keys.has("a"), true); // a is now the most recent
    keys.add("d"); // b goes
    assert.deepEqual(["a", "b", "c", "d"].map((key) => keys.has(key)), [true, false, true, true]);
    keys.add("c"); // already kept: refreshed, nothing forgotten
    assert.equal(keys.size, 3);
    keys.add("e"); // a goes: the has() calls above made it the least recent
    assert.equal(keys.has("a"), false);
    assert.equal(keys.delete("e"), true);
    assert.equal(keys.delete("e"), false);
    keys.clear();
    assert.equal(keys.size, 0);
  });

  it("refuses a bound that is not a positive integer", () => {
    assert.throws(() => new RecentSet(0), RangeError);
    assert.throws(() => new RecentSet(1.5), RangeError);
    assert.throws(() => new RecentSet(Number.NaN), RangeError);
  });
});
