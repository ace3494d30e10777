// Crash safety and multi-process appends, with real child processes.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { createFileTapeStore } from "../../src/tape/file-store.ts";
import { createSqliteTapeStore } from "../../src/tape/sqlite-store.ts";
import { entries } from "../../src/tape/entry.ts";
import { runCrashTrials } from "./support/crash-harness.ts";
import { tempDir } from "./support/helpers.ts";

const CHILD = fileURLToPath(new URL("./support/append-child.ts", import.meta.url));

describe("crash safety", () => {
  it("keeps every acknowledged append of a child killed with SIGKILL (file store, 24 trials)", async () => {
    const report = await runCrashTrials({ store: "file", trials: 24, directory: tempDir("crash-file") });
    assert.equal(report.trials, 24);
    assert.ok(report.acknowledged > 0);
  });

  it("keeps every acknowledged append of a child killed with SIGKILL (SQLite store, 8 trials)", async () => {
    const report = await runCrashTrials({ store: "sqlite", trials: 8, directory: tempDir("crash-sqlite") });
    assert.ok(report.acknowledged > 0);
  });
});

/** Starts a child that appends `count` entries once released; resolves when it is ready. */
function startChild(kind: string, location: string, tape: string, label: string, count: number) {
  const child = spawn(process.execPath, [CHILD, kind, location, tape, label, String(count)], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, BUB_TEST_START_ON_GO: "1" },
  });
  let stdout = "";
  let stderr = "";
  let markReady: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
    if (stdout.startsWith("ready\n")) markReady();
  });
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const done = new Promise<string[]>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(stdout.trim().split("\n").slice(1)) : reject(new Error(`child ${label} failed (${code}): ${stderr}`))));
  });
  return { ready, go: () => child.stdin.end("go\n"), done };
}

describe("two processes appending to one tape", () => {
  for (const kind of ["file", "sqlite"] as const) {
    it(`get unique, increasing ids (${kind} store)`, async () => {
      const directory = tempDir(`two-processes-${kind}`);
      const location = kind === "sqlite" ? join(directory, "tapes.sqlite3") : directory;
      const tape = "feed0000feed0000__beef0000beef0000";
      const children = [startChild(kind, location, tape, "one", 200), startChild(kind, location, tape, "two", 200)];
      await Promise.all(children.map((child) => child.ready));
      for (const child of children) child.go();
      const [first, second] = await Promise.all(children.map((child) => child.done));
      const store = kind === "sqlite" ? createSqliteTapeStore({ path: location }) : createFileTapeStore({ directory: location });
      const found = await store.fetchAll({ tape });
      await store.close?.();
      assert.deepEqual(found.map((entry) => entry.id), Array.from({ length: 400 }, (_, index) => index + 1));
      for (const [label, acks] of [["one", first!], ["two", second!]] as const) {
        assert.equal(acks.length, 200);
        for (const line of acks) {
          const [id, seq] = line.split(" ").map(Number);
          assert.deepEqual(found[id! - 1]!.payload.data, { label, seq, padding: "·".repeat(seq! % 40) });
        }
      }
    });
  }
});

describe("a process that keeps appending", () => {
  it("lets another process take the directory lock, then takes it back (file store)", async () => {
    const directory = tempDir("lingering-lock");
    const tape = "feed0000feed0000__beef0000beef0000";
    // Without a count the child appends until killed, so it never pauses: only the wait flag frees the lock.
    const child = spawn(process.execPath, [CHILD, "file", directory, tape, "busy"], { stdio: ["ignore", "pipe", "inherit"] });
    let acknowledged = 0;
    const started = Promise.withResolvers<void>();
    child.stdout.on("data", (chunk: Buffer) => {
      acknowledged += chunk.toString("utf8").split("\n").length - 1;
      if (acknowledged >= 20) started.resolve();
    });
    try {
      await started.promise;
      const store = createFileTapeStore({ directory, lockTimeoutMs: 5_000 });
      const mine = await store.append(tape, entries.event("from the other process"));
      const before = acknowledged;
      await store.close();
      while (acknowledged < before + 20) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.ok(mine.id > 20, "appended after the busy child's entries");
    } finally {
      child.kill("SIGKILL");
    }
  });
});

