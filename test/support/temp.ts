import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setLogSink, type LogLevel } from "../../src/kernel/log.ts";

/** A fresh temporary directory, removed by the returned cleanup. */
export async function tempDir(prefix = "bub-test-"): Promise<{ path: string; cleanup: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, cleanup: () => rm(path, { recursive: true, force: true }) };
}

/** Captures log records while `body` runs. */
export async function captureLogs<T>(body: () => T | Promise<T>): Promise<{ result: T; logs: { level: LogLevel; message: string }[] }> {
  const logs: { level: LogLevel; message: string }[] = [];
  const restore = setLogSink((level, _namespace, message) => logs.push({ level, message }));
  try {
    return { result: await body(), logs };
  } finally {
    restore();
  }
}
