import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { IdleWaiters } from "../../src/channels/idle.ts";

describe("IdleWaiters", () => {
  it("resolves at once when idle", async () => {
    const waiters = new IdleWaiters(() => true);
    await waiters.wait();
  });

  it("wakes every waiter at the first check that finds it idle, not before", async () => {
    let idle = false;
    const waiters = new IdleWaiters(() => idle);
    const woken: number[] = [];
    const first = waiters.wait().then(() => woken.push(1));
    const second = waiters.wait().then(() => woken.push(2));
    waiters.check();
    await Promise.resolve();
    assert.deepEqual(woken, []);
    idle = true;
    waiters.check();
    await Promise.all([first, second]);
    assert.deepEqual(woken, [1, 2]);
  });
});
