// The file store's memory follows its work: once an append is done, nothing of it (its
// entries, encoded lines, closures) stays reachable from the store, however long the tape
// then stays quiet. A gateway keeps a file object per chat, so what one keeps between turns
// is multiplied by the chats it serves.
import assert from "node:assert/strict";
import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, it } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { TapeEntry } from "../../src/kernel/tape-contract.ts";
import { entries } from "../../src/tape/entry.ts";
import { createFileTapeStore } from "../../src/tape/file-store.ts";
import { tempDir } from "./support/helpers.ts";

setFlagsFromString("--expose-gc");
/** A full garbage collection (the flag above makes `gc` exist in new contexts). */
const collectGarbage = runInNewContext("gc") as () => void;

/** Whether what `ref` points to is collected once the event loop turned and a full GC ran. */
async function collected(ref: WeakRef<object>): Promise<boolean> {
  // A WeakRef's target stays alive until the job that made or read it ends.
  await nextTurn();
  collectGarbage();
  await nextTurn();
  collectGarbage();
  return ref.deref() === undefined;
}

describe("file store: memory after an append", () => {
  it("keeps no entry of a finished append reachable while the tape stays quiet", async () => {
    const store = createFileTapeStore({ directory: tempDir("file-store-memory") });
    try {
      let stored: TapeEntry[] | null = await store.appendBatch("1111__2222", [entries.event("first", { blob: "x".repeat(10_000) }), entries.event("second")]);
      const first = new WeakRef(stored[0]!);
      const second = new WeakRef(stored[1]!);
      stored = null;
      assert.equal(await collected(first), true, "the first entry is still reachable from the store");
      assert.equal(await collected(second), true, "the second entry is still reachable from the store");
      // The store still knows the tape: a read answers from the file.
      assert.deepEqual((await store.fetchAll({ tape: "1111__2222" })).map((entry) => entry.payload.name), ["first", "second"]);
    } finally {
      await store.close();
    }
  });
});
