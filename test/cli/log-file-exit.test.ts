/**
 * The log file is written asynchronously; a `process.exit()` (a second Ctrl-C of
 * `bub gateway`, `bub run`, `bub chat`) must still not lose the records queued behind the
 * write under way. Run in a child process, since the point is the process's real exit.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { RotatingLogFile } from "../../src/cli/log-file.ts";
import { installCliLogging, type ExitEvents } from "../../src/cli/logging.ts";
import { tempDir } from "../support/temp.ts";

const run = promisify(execFile);

/** A child that logs `count` records, then `late` more while they are written, then exits at once. */
const CHILD = `
const [home, count, late] = process.argv.slice(1);
const { installCliLogging } = await import(new URL("../../src/cli/logging.ts", ${JSON.stringify(import.meta.url)}).href);
const { createLogger } = await import(new URL("../../src/kernel/log.ts", ${JSON.stringify(import.meta.url)}).href);
installCliLogging({ home, env: {}, stderr: { write() {} } });
const log = createLogger("bub:test");
for (let index = 0; index < Number(count); index++) log.info("record " + index);
setImmediate(() => {
  for (let index = 0; index < Number(late); index++) log.info("late " + index);
  process.exit(130);
});
`;

describe("the log file at a process.exit()", () => {
  it("keeps every record queued when the process exits at once, in order and once", async () => {
    const dir = await tempDir();
    try {
      const failed = await run(process.execPath, ["--input-type=module", "-e", CHILD, dir.path, "200", "50"]).then(
        () => null,
        (error: { code?: number }) => error.code,
      );
      assert.equal(failed, 130);
      const lines = (await readFile(join(dir.path, "logs", "bub.log"), "utf8")).trim().split("\n");
      const messages = lines.map((line) => line.replace(/^\S+ INFO bub:test /, ""));
      const expected = [...Array.from({ length: 200 }, (_, index) => `record ${index}`), ...Array.from({ length: 50 }, (_, index) => `late ${index}`)];
      assert.deepEqual(messages, expected);
    } finally {
      await dir.cleanup();
    }
  });

  it("stops listening for the exit once uninstalled, and writes nothing twice", async () => {
    const dir = await tempDir();
    try {
      const listeners = new Set<() => void>();
      const exitEvents: ExitEvents = { on: (_event, listener) => listeners.add(listener), off: (_event, listener) => listeners.delete(listener) };
      const logging = installCliLogging({ home: dir.path, env: {}, stderr: { write() {} }, exitEvents });
      assert.equal(listeners.size, 1);
      logging.file.append("one\n");
      logging.file.append("two\n");
      for (const listener of listeners) listener();
      logging.file.append("after the exit\n");
      await logging.file.close();
      assert.equal(await readFile(join(dir.path, "logs", "bub.log"), "utf8"), "one\ntwo\n");
      logging.restore();
      assert.equal(listeners.size, 0);
    } finally {
      await dir.cleanup();
    }
  });

  it("has nothing left to write once flushed", async () => {
    const dir = await tempDir();
    try {
      const file = new RotatingLogFile(join(dir.path, "logs", "bub.log"));
      file.append("a\n");
      await file.flush();
      file.writeQueuedSync();
      await file.close();
      assert.equal(await readFile(join(dir.path, "logs", "bub.log"), "utf8"), "a\n");
    } finally {
      await dir.cleanup();
    }
  });
});
