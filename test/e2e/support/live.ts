/**
 * Helpers for e2e tests that talk to a running `bub` (the installed binary) while it runs —
 * `bub chat` fed line by line, `bub gateway` until it is signalled — and that read what it
 * left in `BUB_HOME`.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { once } from "node:events";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { cleanEnv, installedPackage, type BubResult } from "./installed.ts";

/** A `bub` process started by {@link startBub}. */
export interface LiveBub {
  readonly child: ChildProcessWithoutNullStreams;
  /** Everything written to stdout / stderr so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout matches `pattern`; rejects after `timeoutMs` or when the process exits first. */
  waitForStdout(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves with the result once the process has exited and its output is complete. */
  readonly closed: Promise<BubResult>;
  /** {@link closed}, rejected after `timeoutMs`. */
  exited(timeoutMs?: number): Promise<BubResult>;
  /** SIGKILLs the process if it is still running (for `finally` blocks). */
  kill(): void;
}

/** Rejects with `what` if `promise` is not settled within `ms`. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Waits up to `ms` for `ready` (`what`), failing at once if `live` exits first: the error is
 * `exited` with the exit code, stdout and stderr.
 */
export function readyWithin<T>(live: LiveBub, ready: Promise<T>, ms: number, what: string, exited: string): Promise<T> {
  const exitedEarly = live.closed.then((result): never => {
    throw new Error(`${exited} (${result.code})\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
  });
  exitedEarly.catch(() => {});
  return within(Promise.race([ready, exitedEarly]), ms, what);
}

/** Starts the installed `bub` with `args` in a clean environment, stdin left open. */
export async function startBub(args: readonly string[], options: { home: string; env?: Record<string, string>; cwd?: string }): Promise<LiveBub> {
  const { bin } = await installedPackage();
  const child = spawn(bin, args, { cwd: options.cwd ?? options.home, env: cleanEnv(options.home, options.env), stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  let listeners: (() => void)[] = [];
  let ended = false;
  const changed = () => {
    for (const listener of listeners) listener();
  };
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    changed();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  // `close` comes after both pipes have ended, so the collected output is complete.
  const closed = once(child, "close").then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null, stdout, stderr }));
  closed.then(() => {
    ended = true;
    changed();
  }, () => {});
  child.stdin.on("error", () => {}); // writing to a process that already left is the test's failure to report, not a crash
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    closed,
    waitForStdout(pattern, timeoutMs = 15_000) {
      let check = () => {};
      const waiting = new Promise<RegExpMatchArray>((resolve, reject) => {
        check = () => {
          const match = stdout.match(pattern);
          if (match) resolve(match);
          else if (ended) reject(new Error(`bub exited (${child.exitCode ?? child.signalCode}) before stdout matched ${pattern}`));
        };
        listeners.push(check);
        check();
      });
      return within(waiting, timeoutMs, `stdout to match ${pattern}`)
        // The output so far, to see what came instead.
        .catch((error: Error) => {
          throw new Error(`${error.message}\nstdout so far:\n${stdout}\nstderr:\n${stderr}`);
        })
        .finally(() => void (listeners = listeners.filter((listener) => listener !== check)));
    },
    exited(timeoutMs = 15_000) {
      return within(closed, timeoutMs, `bub ${args[0] ?? ""} to exit`);
    },
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}

/**
 * Calls `probe` every `intervalMs` until it returns a value other than undefined, for what
 * a process does not announce (a file it writes); rejects after `timeoutMs`.
 */
export async function pollUntil<T>(probe: () => Promise<T | undefined> | T | undefined, what: string, options: { timeoutMs?: number; intervalMs?: number } = {}): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${options.timeoutMs ?? 15_000} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 20));
  }
}

/** One entry of a tape file. */
export interface TapeEntry {
  id: number;
  kind: string;
  payload: Record<string, unknown>;
  meta: Record<string, unknown>;
  date: string;
}

/** The session tapes under `<bubHome>/tapes` (sidecars left out), by tape name. */
export async function readTapes(bubHome: string): Promise<Map<string, TapeEntry[]>> {
  const directory = join(bubHome, "tapes");
  const tapes = new Map<string, TapeEntry[]>();
  const names = await readdir(directory).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [];
    throw error;
  });
  for (const name of names.sort()) {
    // A session tape's stem is `<workspace hash>__<session hash>` (the name index and sidecars are not).
    if (!name.endsWith(".jsonl") || name.slice(0, -".jsonl".length).split("__").length !== 2) continue;
    // Only whole lines: a file read while bub appends to it may end in half a line.
    const lines = (await readFile(join(directory, name), "utf8")).split("\n").slice(0, -1);
    tapes.set(
      name.slice(0, -".jsonl".length),
      lines.filter((line) => line.trim() !== "").map((line) => JSON.parse(line) as TapeEntry),
    );
  }
  return tapes;
}

/** The only session tape under `<bubHome>/tapes`; fails when there is not exactly one. */
export async function onlyTape(bubHome: string): Promise<TapeEntry[]> {
  const tapes = await readTapes(bubHome);
  if (tapes.size !== 1) throw new Error(`expected one session tape in ${bubHome}/tapes, found: ${[...tapes.keys()].join(", ") || "none"}`);
  return [...tapes.values()][0]!;
}
