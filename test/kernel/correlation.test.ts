import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { correlated, currentCorrelation, currentCorrelationMeta, newCorrelationId, withCorrelation } from "../../src/kernel/correlation.ts";
import { scopeIdentity } from "../../src/kernel/async-scope.ts";

describe("correlation ids", () => {
  it("makes UUID v7 ids that differ and sort by the time they were made", async () => {
    const first = newCorrelationId();
    await new Promise((resolve) => setTimeout(resolve, 2));
    const ids = Array.from({ length: 1000 }, () => newCorrelationId());
    for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(new Set(ids).size, ids.length);
    assert.ok(ids.every((id) => id > first), "a later millisecond sorts after");
    const ms = Number.parseInt(first.replaceAll("-", "").slice(0, 12), 16);
    assert.ok(Math.abs(ms - Date.now()) < 5_000, "the first 48 bits are the Unix time in ms");
  });

  it("is undefined outside any scope", () => {
    assert.equal(currentCorrelation(), undefined);
    assert.equal(currentCorrelationMeta(), undefined);
  });

  it("nests: inner scopes add ids and keep the outer ones, in work started inside and awaited later", async () => {
    const seen = await withCorrelation({ turnId: "t1" }, async () => {
      const step = withCorrelation({ modelCallId: "m1" }, () =>
        Promise.all([
          withCorrelation({ toolCallId: "call_a" }, async () => {
            await new Promise((resolve) => setTimeout(resolve, 1));
            return currentCorrelationMeta();
          }),
          withCorrelation({ toolCallId: "call_b" }, async () => currentCorrelation()),
        ]),
      );
      return { step: await step, after: currentCorrelationMeta() };
    });
    assert.deepEqual(seen.step[0], { turn_id: "t1", model_call_id: "m1", tool_call_id: "call_a" });
    assert.deepEqual(seen.step[1], { turnId: "t1", modelCallId: "m1", toolCallId: "call_b" });
    assert.deepEqual(seen.after, { turn_id: "t1" });
  });

  it("starts afresh for another turn, and keeps the call ids for the same turn", () => {
    withCorrelation({ turnId: "t1", modelCallId: "m1", toolCallId: "call_a" }, () => {
      assert.deepEqual(withCorrelation({ turnId: "t2" }, () => currentCorrelationMeta()), { turn_id: "t2" });
      assert.deepEqual(withCorrelation({ turnId: "t1" }, () => currentCorrelationMeta()), { turn_id: "t1", model_call_id: "m1", tool_call_id: "call_a" });
    });
  });

  it("runs a stream's producer in the scope on every pull, whoever pulls it", async () => {
    async function* producer() {
      yield currentCorrelation()?.modelCallId;
      await new Promise((resolve) => setTimeout(resolve, 1));
      yield currentCorrelation()?.modelCallId;
    }
    const stream = withCorrelation({ turnId: "t1" }, () => correlated({ modelCallId: "m1" }, producer()));
    const pulled: unknown[] = [];
    for await (const value of stream) pulled.push(value, currentCorrelation());
    assert.deepEqual(pulled, ["m1", undefined, "m1", undefined], "the consumer stays outside");
  });

  it("runs the producer in the consumer's own scope when that scope has the ids already", async () => {
    async function* producer() {
      yield scopeIdentity();
      await new Promise((resolve) => setTimeout(resolve, 1));
      yield scopeIdentity();
    }
    await withCorrelation({ turnId: "t1" }, async () => {
      const outer = scopeIdentity();
      const seen: unknown[] = [];
      for await (const scope of correlated({ turnId: "t1" }, producer())) seen.push(scope);
      assert.equal(seen.length, 2);
      for (const scope of seen) assert.equal(scope, outer, "the consumer's scope object itself, no new one for every pull");
      for await (const _scope of correlated({ modelCallId: "m1" }, producer())) assert.notEqual(_scope, outer, "a new id still gets its scope");
    });
  });

  it("closes the producer inside the scope when the consumer stops early", async () => {
    let closedIn: unknown;
    async function* producer() {
      try {
        yield 1;
        yield 2;
      } finally {
        closedIn = currentCorrelation();
      }
    }
    for await (const _value of correlated({ turnId: "t9" }, producer())) break;
    assert.deepEqual(closedIn, { turnId: "t9" });
  });
});
