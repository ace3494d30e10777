// The directory lock's lingering: kept between calls while they come, given up when idle or
// when another lock object waits (SQLite's locks behave across connections of one process as
// across processes; test/tape/crash.test.ts has two real processes).
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createProcessLock } from "../../src/tape/process-lock.ts";
import { bubError, tempDir } from "./support/helpers.ts";

function lockPath(): string {
  return join(tempDir("lock"), ".tapes.lock");
}

describe("process lock", () => {
  it("without lingering, lets go after each call", async () => {
    const path = lockPath();
    const first = createProcessLock(path);
    const second = createProcessLock(path, { timeoutMs: 50 });
    assert.equal(await first.run(() => 1), 1);
    assert.equal(await second.run(() => 2), 2);
    first.close();
    second.close();
  });

  it("a lingering lock keeps the lock between calls that come often", async () => {
    const path = lockPath();
    const holder = createProcessLock(path, { lingerMs: 60_000 });
    for (let call = 0; call < 3; call++) await holder.run(() => undefined);
    const other = createProcessLock(path, { timeoutMs: 100 });
    await assert.rejects(
      other.run(() => undefined),
      bubError("temporary", /Waited 100 ms for the tape lock/),
    );
    holder.close();
    assert.equal(await other.run(() => "taken once closed"), "taken once closed");
    other.close();
  });

  it("a lingering lock lets go after a call that came alone (an interactive process writes now and then)", async () => {
    const path = lockPath();
    const holder = createProcessLock(path, { lingerMs: 60_000 });
    await holder.run(() => undefined);
    await holder.run(() => undefined);
    const other = createProcessLock(path, { timeoutMs: 50 });
    assert.equal(await other.run(() => "not kept after two calls"), "not kept after two calls");
    holder.close();
    other.close();
  });

  it("a lingering lock lets go once no call came for a while", async () => {
    const path = lockPath();
    const holder = createProcessLock(path, { lingerMs: 20 });
    for (let call = 0; call < 3; call++) await holder.run(() => undefined);
    // This one says nothing while it waits (no lingering): only the holder's idleness frees the lock.
    const other = createProcessLock(path, { timeoutMs: 10_000 });
    assert.equal(await other.run(() => "after the holder went idle"), "after the holder went idle");
    holder.close();
    other.close();
  });

  it("a lingering lock that keeps being used lets go for a waiter, then takes it back", async () => {
    const path = lockPath();
    const holder = createProcessLock(path, { lingerMs: 20 });
    const waiter = createProcessLock(path, { lingerMs: 20, timeoutMs: 3_000 });
    const order: string[] = [];
    let writing = true;
    const busy = (async () => {
      while (writing) {
        await holder.run(() => order.push("holder"));
        await sleep(2);
      }
    })();
    let at: number;
    try {
      await sleep(30);
      await waiter.run(() => order.push("waiter"));
      at = order.indexOf("waiter");
      await sleep(200);
    } finally {
      writing = false;
      await busy;
    }
    assert.ok(at > 0, "the holder wrote first");
    assert.ok(order.lastIndexOf("holder") > at, "the holder took the lock back");
    holder.close();
    waiter.close();
  });

  it("runs the calls of one lock object one at a time, in order, also when one fails", async () => {
    const lock = createProcessLock(lockPath(), { lingerMs: 20 });
    const seen: number[] = [];
    const calls = [1, 2, 3].map((n) =>
      lock.run(async () => {
        seen.push(n);
        await sleep(5);
        if (n === 2) throw new Error("two failed");
        seen.push(-n);
      }),
    );
    const results = await Promise.allSettled(calls);
    assert.deepEqual(seen, [1, -1, 2, 3, -3]);
    assert.deepEqual(results.map((result) => result.status), ["fulfilled", "rejected", "fulfilled"]);
    lock.close();
  });
});
