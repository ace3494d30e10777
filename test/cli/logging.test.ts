import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { RotatingLogFile } from "../../src/cli/log-file.ts";
import { fileLogLevel, formatLogRecord, installCliLogging, stderrLogLevel, trafficOnStderr, turnRecordsOnStderr } from "../../src/cli/logging.ts";
import { messagePreview, TRAFFIC_NAMESPACE } from "../../src/channels/traffic.ts";
import { createLogger } from "../../src/kernel/log.ts";
import { forgetSecrets, rememberSecrets } from "../../src/config/redaction.ts";
import { tempDir } from "../support/temp.ts";

describe("the rotating log file", () => {
  it("appends in order, creating its folder, and keeps the size under the limit by rotating", async () => {
    const dir = await tempDir();
    try {
      const file = new RotatingLogFile(join(dir.path, "logs", "bub.log"), { maxBytes: 100, files: 3 });
      for (let index = 0; index < 12; index++) file.append(`line ${String(index).padStart(2, "0")} ${"x".repeat(20)}\n`);
      await file.flush();
      const names = (await readdir(join(dir.path, "logs"))).sort();
      assert.deepEqual(names, ["bub.log", "bub.log.1", "bub.log.2"]);
      for (const name of names) assert.ok((await stat(join(dir.path, "logs", name))).size <= 100, name);
      const newest = await readFile(join(dir.path, "logs", "bub.log"), "utf8");
      assert.match(newest, /line 11/);
      const older = await readFile(join(dir.path, "logs", "bub.log.1"), "utf8");
      const lines = (older + newest).trim().split("\n").map((line) => Number(line.slice(5, 7)));
      assert.deepEqual(lines, [...lines].sort((a, b) => a - b), "records keep their order across files");
    } finally {
      await dir.cleanup();
    }
  });

  it("gives up quietly when the file cannot be written", async () => {
    const dir = await tempDir();
    try {
      const { writeFile } = await import("node:fs/promises");
      await writeFile(join(dir.path, "logs"), "a file where the folder should be");
      const file = new RotatingLogFile(join(dir.path, "logs", "bub.log"));
      file.append("lost\n");
      await file.flush();
      file.append("ignored\n");
      await file.flush();
    } finally {
      await dir.cleanup();
    }
  });
});

describe("the command line's log levels", () => {
  it("writes info and above to the file unless BUB_LOG_LEVEL or BUB_DEBUG say otherwise", () => {
    assert.equal(fileLogLevel({}), "info");
    assert.equal(fileLogLevel({ BUB_LOG_LEVEL: "ERROR" }), "error");
    assert.equal(fileLogLevel({ BUB_DEBUG: "1" }), "debug");
    assert.equal(fileLogLevel({ BUB_LOG_LEVEL: "nonsense" }), "info");
  });

  it("shows warnings on stderr, and a turn's records only for the gateway or when asked", () => {
    assert.equal(stderrLogLevel({}), "warn");
    assert.equal(stderrLogLevel({ BUB_DEBUG: "1" }), "debug");
    assert.equal(turnRecordsOnStderr({ command: "run", env: {} }), false);
    assert.equal(turnRecordsOnStderr({ command: "gateway", env: {} }), true);
    assert.equal(turnRecordsOnStderr({ command: "run", env: { BUB_LOG_LEVEL: "info" } }), true);
  });

  it("formats a record with its time, level, stack and causes", () => {
    const error = new Error("outer", { cause: new Error("inner") });
    const text = formatLogRecord(new Date("2026-01-02T03:04:05.006Z"), "error", "bub:test", "turn.error session_id=cli:local", error);
    assert.match(text, /^2026-01-02T03:04:05\.006Z ERROR bub:test turn\.error session_id=cli:local: outer\n {4}at /);
    assert.match(text, /\n {2}caused by: inner\n$/);
    assert.equal(formatLogRecord(new Date(0), "info", "bub:x", "hello"), "1970-01-01T00:00:00.000Z INFO bub:x hello\n");
  });
});

describe("installCliLogging", () => {
  it("records every record at the file's level, redacted, and shows warnings on stderr", async () => {
    const dir = await tempDir();
    const stderr: string[] = [];
    const logging = installCliLogging({ home: dir.path, command: "run", env: {}, stderr: { write: (text) => stderr.push(text) } });
    rememberSecrets([{ name: "api_key", value: "sk-log-secret-42" }]);
    try {
      const log = createLogger("bub:test");
      log.debug("not written");
      log.info("started");
      log.error("turn.error session_id=s1", new Error("key sk-log-secret-42 refused", { cause: new Error("again sk-log-secret-42") }));
      await logging.file.flush();
      const text = await readFile(join(dir.path, "logs", "bub.log"), "utf8");
      assert.doesNotMatch(text, /not written/);
      assert.match(text, /INFO bub:test started\n/);
      assert.match(text, /ERROR bub:test turn\.error session_id=s1: key \[redacted:api_key\] refused/);
      assert.match(text, /caused by: again \[redacted:api_key\]/);
      assert.doesNotMatch(text, /sk-log-secret-42/);
      assert.deepEqual(stderr, ["ERROR bub:test turn.error session_id=s1: key [redacted:api_key] refused\n"]);
      assert.ok(logging.turnSink, "a run's turn records stay off stderr");
    } finally {
      forgetSecrets();
      logging.restore();
      await dir.cleanup();
    }
  });
});

describe("installCliLogging for bub gateway", () => {
  it("shows the per-message lines on stderr by default, and only those of the info records", async () => {
    const dir = await tempDir();
    const stderr: string[] = [];
    const logging = installCliLogging({ home: dir.path, command: "gateway", env: {}, stderr: { write: (text) => stderr.push(text) } });
    try {
      createLogger(TRAFFIC_NAMESPACE).info("in telegram chat_id=7 session_id=telegram:7: hello");
      createLogger("bub:channels").info("session.message received active session_id=telegram:7");
      assert.deepEqual(stderr, ["INFO bub:messages in telegram chat_id=7 session_id=telegram:7: hello\n"]);
    } finally {
      logging.restore();
      await logging.file.flush();
      await dir.cleanup();
    }
    assert.equal(trafficOnStderr({ command: "gateway", env: {} }), true);
    assert.equal(trafficOnStderr({ command: "gateway", env: { BUB_LOG_LEVEL: "warn" } }), false, "a level the user chose wins");
    assert.equal(trafficOnStderr({ command: "run", env: {} }), false);
  });
});

describe("messagePreview", () => {
  it("shows a channel's message text on one line, clipped to 60 characters", () => {
    assert.equal(messagePreview(JSON.stringify({ message: "hello\n  there", chat_id: "7" })), "hello there");
    assert.equal(messagePreview("plain   text"), "plain text");
    const long = messagePreview("word ".repeat(40));
    assert.equal([...long].length, 60);
    assert.ok(long.endsWith("…"));
  });
});

describe("RotatingLogFile shared by two processes", () => {
  it("writes to the file at the path after another writer rotated it", async () => {
    const dir = await tempDir();
    try {
      const path = join(dir.path, "logs", "bub.log");
      const first = new RotatingLogFile(path, { maxBytes: 60, files: 3 });
      const second = new RotatingLogFile(path, { maxBytes: 60, files: 3 });
      first.append("first 0123456789012345678901234567890\n");
      await first.flush();
      second.append("second 012345678901234567890123456789\n");
      await second.flush(); // rotates: bub.log -> bub.log.1
      first.append("first again 0123456789012345678901234\n");
      await first.flush();
      const current = await readFile(path, "utf8");
      assert.match(current, /first again/, "the first writer follows the rotation");
      await Promise.all([first.close(), second.close()]);
    } finally {
      await dir.cleanup();
    }
  });
});
