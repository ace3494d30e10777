// Shared helpers for the tape tests: temporary directories, the three stores, log capture.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { setLogSink, type LogLevel } from "../../../src/kernel/log.ts";
import { BubError, type ErrorKind } from "../../../src/kernel/errors.ts";
import type { TapeStore } from "../../../src/kernel/tape-contract.ts";
import { createFileTapeStore } from "../../../src/tape/file-store.ts";
import { createMemoryTapeStore } from "../../../src/tape/memory-store.ts";
import { createSqliteTapeStore } from "../../../src/tape/sqlite-store.ts";

const directories: string[] = [];
after(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** A fresh temporary directory, removed when the test file finishes. */
export function tempDir(label = "tape"): string {
  const directory = mkdtempSync(join(tmpdir(), `bub-test-${label}-`));
  directories.push(directory);
  return directory;
}

/** How each store is made for the shared contract tests. */
export const storeFactories: readonly (readonly [string, () => TapeStore])[] = [
  ["memory", () => createMemoryTapeStore()],
  ["file", () => createFileTapeStore({ directory: join(tempDir("file"), "tapes") })],
  ["sqlite", () => createSqliteTapeStore({ path: join(tempDir("sqlite"), "tapes.sqlite3") })],
];

/** Records log lines while a test runs; `restore()` puts the previous sink back. */
export function captureLogs(): { records: { level: LogLevel; message: string }[]; restore: () => void } {
  const records: { level: LogLevel; message: string }[] = [];
  const restore = setLogSink((level, _namespace, message) => records.push({ level, message }));
  return { records, restore };
}

/** An assert.rejects matcher for a BubError of `kind` with exactly `message` (or matching it). */
export function bubError(kind: ErrorKind, message: string | RegExp): (error: unknown) => boolean {
  return (error: unknown) => {
    if (!BubError.isInstance(error)) throw new Error(`expected a BubError, got ${String(error)}`);
    if (error.kind !== kind) throw new Error(`expected kind ${kind}, got ${error.kind}: ${error.message}`);
    const ok = typeof message === "string" ? error.message === message : message.test(error.message);
    if (!ok) throw new Error(`unexpected message: ${error.message}`);
    return true;
  };
}
