import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, it } from "node:test";
import { RotatingLogFile } from "../../src/cli/log-file.ts";
import type { ExitEvents } from "../../src/cli/logging.ts";
import { stderrBatch } from "../../src/cli/stderr-batch.ts";
import { tempDir } from "../support/temp.ts";

function exitEvents(): ExitEvents & { listeners: Set<() => void> } {
  const listeners = new Set<() => void>();
  return { listeners, on: (_event, listener) => listeners.add(listener), off: (_event, listener) => listeners.delete(listener) };
}

describe("stderrBatch", () => {
  it("gathers the lines of a burst into one write, in order", async () => {
    const writes: string[] = [];
    const written = Promise.withResolvers<void>();
    const target = { write: (text: string) => (writes.push(text), written.resolve()) };
    const batch = stderrBatch(target, { delayMs: 5, exitEvents: exitEvents() });
    for (let index = 0; index < 100; index++) batch.write(`line ${index}\n`);
    assert.deepEqual(writes, [], "nothing is written while the lines gather");
    await written.promise;
    assert.equal(writes.length, 1);
    assert.equal(writes[0], Array.from({ length: 100 }, (_, index) => `line ${index}\n`).join(""));
    batch.write("later\n");
    batch.flush();
    assert.deepEqual(writes.slice(1), ["later\n"]);
    batch.close();
  });

  it("writes what is gathered when the process exits, and stops listening once closed", () => {
    const writes: string[] = [];
    const events = exitEvents();
    const batch = stderrBatch({ write: (text) => writes.push(text) }, { delayMs: 10_000, exitEvents: events });
    batch.write("one\n");
    batch.write("two\n");
    for (const listener of events.listeners) listener();
    assert.deepEqual(writes, ["one\ntwo\n"]);
    batch.close();
    assert.equal(events.listeners.size, 0);
  });
});

describe("RotatingLogFile with gatherMs", () => {
  it("waits for more records before writing, and flush does not wait", async () => {
    const dir = await tempDir();
    try {
      const path = join(dir.path, "logs", "bub.log");
      const file = new RotatingLogFile(path, { gatherMs: 10_000 });
      file.append("a\n");
      file.append("b\n");
      await sleep(20);
      assert.equal(existsSync(path), false, "nothing written while the records gather");
      await file.flush();
      assert.equal(await readFile(path, "utf8"), "a\nb\n");
      file.append("c\n");
      await file.close();
      assert.equal(await readFile(path, "utf8"), "a\nb\nc\n");
    } finally {
      await dir.cleanup();
    }
  });
});
