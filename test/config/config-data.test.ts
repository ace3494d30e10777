import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mergeConfig } from "../../src/config/config-data.ts";

describe("config data", () => {
  it("deep-merges in place with incoming values winning", () => {
    const base: Record<string, unknown> = { a: 1, nested: { x: 1, y: 1 } };
    const incoming = { nested: { y: 2, z: { deep: true } }, b: [1] };
    mergeConfig(base, incoming, null);
    assert.deepEqual(base, { a: 1, nested: { x: 1, y: 2, z: { deep: true } }, b: [1] });
    (incoming.nested.z as { deep: boolean }).deep = false;
    assert.equal(((base.nested as Record<string, unknown>).z as { deep: boolean }).deep, true);
  });
});
