// A child process for the crash and multi-process tests: appends entries to one tape and
// prints "<id> <seq>" on stdout for every entry whose append has resolved (is durable).
// Usage: node append-child.ts <file|sqlite> <directory or database path> <tape> <label> [count]
// Without a count it appends until killed. Stdout to a pipe is synchronous on Linux, so an
// acknowledgement is in the pipe before the next append starts.
import type { TapeStore } from "../../../src/kernel/tape-contract.ts";
import { entries } from "../../../src/tape/entry.ts";
import { createFileTapeStore } from "../../../src/tape/file-store.ts";
import { createSqliteTapeStore } from "../../../src/tape/sqlite-store.ts";

const [kind, location, tape, label, countText] = process.argv.slice(2);
if (!kind || !location || !tape || !label) {
  process.stderr.write("usage: append-child.ts <file|sqlite> <location> <tape> <label> [count]\n");
  process.exit(2);
}
const store: TapeStore = kind === "sqlite" ? createSqliteTapeStore({ path: location }) : createFileTapeStore({ directory: location });
const limit = countText ? Number(countText) : Infinity;

// With BUB_TEST_START_ON_GO=1, say "ready" and wait for a line on stdin, so that several
// children can be released at the same moment.
if (process.env.BUB_TEST_START_ON_GO === "1") {
  process.stdout.write("ready\n");
  await new Promise((resolve) => process.stdin.once("data", resolve));
  process.stdin.pause();
}

let seq = 0;
while (seq < limit) {
  const size = 1 + (seq % 3);
  const batch = Array.from({ length: Math.min(size, limit - seq) }, (_, offset) =>
    entries.event("crash.probe", { label, seq: seq + offset, padding: "·".repeat((seq + offset) % 40) }),
  );
  const stored = batch.length === 1 ? [await store.append(tape, batch[0]!)] : await store.appendBatch!(tape, batch);
  process.stdout.write(stored.map((entry) => `${entry.id} ${(entry.payload.data as { seq: number }).seq}\n`).join(""));
  seq += batch.length;
}
await store.close?.();
