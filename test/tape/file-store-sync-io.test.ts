import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { entries } from "../../src/tape/entry.ts";
import { createFileTapeStore } from "../../src/tape/file-store.ts";
import { tempDir } from "./support/helpers.ts";

const source = (path: string): string => JSON.stringify(new URL(`../../src/${path}`, import.meta.url).href);
const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

/**
 * A burst of appends and reads on a file store, the way a busy gateway makes them (several
 * tapes at once, each turn a read then a batch, a second store object, a reset), in a child
 * process run with `--trace-sync-io`, which prints a stack for every synchronous file-system
 * (or other blocking) call made after the first turn of the event loop.
 */
const BURST = `
  const { createFileTapeStore } = await import(${source("tape/file-store.ts")});
  const { entries } = await import(${source("tape/entry.ts")});
  await new Promise((resolve) => setTimeout(resolve, 20));
  const directory = process.argv[1];
  const store = createFileTapeStore({ directory });
  const tapes = Array.from({ length: 8 }, (_, index) => "t" + index + "__s");
  await Promise.all(tapes.map(async (tape) => {
    await store.append(tape, entries.anchor("session/start"));
    for (let turn = 0; turn < 5; turn++) {
      await store.fetchAll({ tape, lastAnchor: true });
      await store.appendBatch(tape, [entries.event("step", { turn }), entries.event("done", { turn })]);
    }
  }));
  const other = createFileTapeStore({ directory, maxOpenFiles: 2 });
  for (const tape of tapes) await other.fetchAll({ tape, text: "step", limit: 3 });
  await Promise.all(tapes.map((tape) => other.append(tape, entries.event("other"))));
  await store.fetchAll({ tape: tapes[0], afterAnchor: "session/start" });
  await store.reset(tapes[1]);
  await store.skippedLines(tapes[0]);
  await store.close();
  await other.close();
  console.log("done", (await store.listTapes()).length);
`;

function runTraced(directory: string): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--trace-sync-io", "--input-type=module", "-e", BURST, directory],
      { timeout: 60_000, killSignal: "SIGKILL", maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr.slice(-4000)}`)) : resolve({ stdout, stderr })),
    );
  });
}

describe("file store: nothing blocks the event loop", () => {
  it("makes no synchronous file-system call from bub's code during a burst of appends and reads", async () => {
    const { stdout, stderr } = await runTraced(tempDir("sync-io"));
    assert.equal(stdout.trim(), "done 7");
    // Each trace is a warning line followed by its stack; keep those with a frame in src/.
    const traces = stderr.split(/^\(node:\d+\) WARNING: Detected use of sync API$/m).slice(1);
    const ours = traces.filter((trace) => trace.includes(SRC));
    assert.deepEqual(
      ours.map((trace) => trace.trim().split("\n").slice(0, 3).join(" | ")),
      [],
      `${ours.length} of ${traces.length} synchronous calls came from src/`,
    );
  });
});

describe("file store: write rounds", () => {
  it("gives concurrent appends to several tapes their own entries, ids in the order asked, one line each", async () => {
    const directory = tempDir("rounds");
    const store = createFileTapeStore({ directory });
    const tapes = ["a__1", "b__2", "c__3"];
    const calls = Array.from({ length: 60 }, (_, call) => {
      const tape = tapes[call % tapes.length]!;
      const batch = Array.from({ length: 1 + (call % 4) }, (_, index) => entries.event("probe", { call, index }));
      return { tape, batch, done: store.appendBatch(tape, batch) };
    });
    const reads = tapes.map((tape) => store.fetchAll({ tape }));
    const previous = new Map<string, number>();
    for (const { tape, batch, done } of calls) {
      const stored = await done;
      assert.deepEqual(
        stored.map((entry) => entry.payload.data),
        batch.map((entry) => entry.payload.data),
      );
      const first = stored[0]!.id;
      assert.equal(first, (previous.get(tape) ?? 0) + 1, "ids follow the order of the calls, without gaps");
      assert.deepEqual(
        stored.map((entry) => entry.id),
        stored.map((_, index) => first + index),
      );
      previous.set(tape, stored.at(-1)!.id);
    }
    for (const [index, tape] of tapes.entries()) {
      const seen = (await reads[index]!).map((entry) => entry.id);
      assert.deepEqual(seen, seen.map((_, at) => at + 1), "a read made meanwhile sees a prefix of the tape");
      const lines = readFileSync(join(directory, `${tape}.jsonl`), "utf8").trimEnd().split("\n");
      assert.deepEqual(
        lines.map((line) => (JSON.parse(line) as { id: number }).id),
        lines.map((_, at) => at + 1),
      );
      assert.equal(lines.length, previous.get(tape));
    }
    await store.close();
  });
});
