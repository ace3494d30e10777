import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createChangeWatch } from "../../src/ui/live.ts";

/** Resolves with the next fingerprint `subscribe` reports. */
function nextChange(): { listener: (fingerprint: string) => void; next: () => Promise<string> } {
  let waiting: ((fingerprint: string) => void) | null = null;
  const queued: string[] = [];
  return {
    listener: (fingerprint) => (waiting ? (waiting(fingerprint), (waiting = null)) : queued.push(fingerprint)),
    next: () => (queued.length > 0 ? Promise.resolve(queued.shift()!) : new Promise((resolve) => (waiting = resolve))),
  };
}

describe("live updates: one poller per watched thing", () => {
  it("tells each listener what differs from what it has seen, and stops polling with the last listener", async () => {
    const watch = createChangeWatch(5);
    let value = 1;
    let reads = 0;
    const read = async () => {
      reads++;
      return String(value);
    };
    const first = nextChange();
    const second = nextChange();
    const stopFirst = watch.subscribe("tape", read, "1", first.listener);
    const stopSecond = watch.subscribe("tape", read, "0", second.listener);
    assert.equal(await second.next(), "1", "a page that has seen less is told at once");
    value = 2;
    assert.equal(await first.next(), "2");
    assert.equal(await second.next(), "2");
    stopFirst();
    stopSecond();
    const after = reads;
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.ok(reads <= after + 1, "no more polling once nobody listens");
    watch.close();
  });

  it("serves every listener of a key with one read", async () => {
    const watch = createChangeWatch(5);
    let reads = 0;
    let release: (value: string) => void = () => undefined;
    const read = () => {
      reads++;
      return new Promise<string>((resolve) => (release = resolve));
    };
    const change = nextChange();
    const stops = [watch.subscribe("tape", read, null, change.listener), watch.subscribe("tape", read, null, () => undefined), watch.subscribe("tape", read, null, () => undefined)];
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(reads, 1, "one read in flight for three pages");
    release("a");
    assert.equal(await change.next(), "a");
    for (const stop of stops) stop();
    watch.close();
  });

  it("keeps polling after a failed read", async () => {
    const watch = createChangeWatch(5);
    let calls = 0;
    const change = nextChange();
    const stop = watch.subscribe(
      "flaky",
      async () => {
        if (++calls === 1) throw new Error("store unavailable");
        return "ok";
      },
      null,
      change.listener,
    );
    assert.equal(await change.next(), "ok");
    stop();
    watch.close();
  });
});
