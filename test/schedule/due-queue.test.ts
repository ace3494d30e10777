import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { DueQueue } from "../../src/schedule/due-queue.ts";

describe("DueQueue", () => {
  it("pops entries in due order whatever order they were pushed and popped in", () => {
    const queue = new DueQueue();
    const expected: number[] = [];
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % 100;
    for (let index = 0; index < 500; index++) {
      const due = random();
      queue.push({ due, id: `job-${index}` });
      expected.push(due);
      if (index % 3 === 0) {
        expected.sort((a, b) => a - b);
        assert.equal(queue.pop()!.due, expected.shift());
      }
    }
    expected.sort((a, b) => a - b);
    assert.equal(queue.size, expected.length);
    assert.equal(queue.peek()!.due, expected[0]);
    const popped: number[] = [];
    for (let entry = queue.pop(); entry; entry = queue.pop()) popped.push(entry.due);
    assert.deepEqual(popped, expected);
    assert.equal(queue.pop(), undefined);
  });
});
