/**
 * Finding a command's processes from the test's side of a PID namespace: a `bash` command
 * run in its own namespace sees its own pids (`$$` is 2 there), so tests look its processes
 * up by a unique word in their command line instead.
 */
import { readdirSync, readFileSync } from "node:fs";

/** A word no other process on the machine has in its command line, e.g. `sleep ${uniqueSeconds()}`. */
export function uniqueSeconds(base = 30): string {
  return `${base}.${String(process.pid).padStart(7, "0")}${String(Math.floor(Math.random() * 1e6)).padStart(6, "0")}`;
}

/**
 * The pids (as this process sees them) of live, non-zombie processes whose command line
 * contains `text` (and starts with `start`: `sleep ` for the sleeps, not the shells around them).
 */
export function processesWith(text: string, start = ""): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "latin1").replaceAll("\0", " ");
      if (!cmdline.includes(text) || !cmdline.startsWith(start)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      if (stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z") found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Polls until no live process has `text` in its command line; resolves with those still there after `timeoutMs`. */
export async function processesGone(text: string, timeoutMs = 5_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let left = processesWith(text);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    left = processesWith(text);
  }
  return left;
}

/**
 * Polls until at least `count` live processes have `text` in their command line (starting
 * with `start`); rejects after `timeoutMs`.
 */
export async function processesStarted(text: string, timeoutMs = 10_000, count = 1, start = ""): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = processesWith(text, start);
    if (found.length >= count) return found;
    if (Date.now() > deadline) throw new Error(`no process with '${text}' in its command line after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
