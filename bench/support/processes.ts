/**
 * What the whole-process benchmarks share: the package packed and installed the way users
 * get it (`npm pack`, then `npm install <tarball>`, through the e2e suite's
 * `packAndInstall`), a clean environment, one spawn helper that times a process and can
 * read its peak RSS, and a runner that interleaves the commands being compared so that the
 * machine's drift hits all of them alike.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { packAndInstall, installedPackage, cleanEnv, type InstalledPackage } from "../../test/e2e/support/installed.ts";

/** Every temporary folder of this bench process; removed when the process exits. */
export const scratch = mkdtempSync(join(tmpdir(), "bub-bench-"));
process.once("exit", () => rmSync(scratch, { recursive: true, force: true }));

/** A fresh folder below {@link scratch}. */
export function tempDir(prefix: string): string {
  return mkdtempSync(join(scratch, `${prefix}-`));
}

/**
 * Packs the checkout and installs the tarball into a temporary prefix (once per bench process);
 * `BUB_E2E_PREFIX` names a prefix installed before (as the e2e runner does), to measure it instead.
 */
export async function installBub(): Promise<InstalledPackage> {
  const started = performance.now();
  const installed = process.env.BUB_E2E_PREFIX ? await installedPackage() : await packAndInstall(tempDir("pack"));
  if (!existsSync(installed.bin)) throw new Error(`npm install did not create ${installed.bin}`);
  const { version } = JSON.parse(readFileSync(join(installed.prefix, "node_modules", "bub-ts", "package.json"), "utf8")) as { version: string };
  console.log(`packed and installed bub-ts ${version} (${installed.tarball.split("/").at(-1)}) in ${((performance.now() - started) / 1000).toFixed(1)} s; measuring ${installed.bin}`);
  return installed;
}

/**
 * The environment a user's shell gives a command (PATH, HOME, LANG, NO_COLOR; nothing from
 * this machine's BUB_*, proxy or provider variables), with this Node first on PATH so the
 * installed bins' `#!/usr/bin/env node` runs the same Node as the `node -e 0` baseline.
 */
export function userEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return cleanEnv(home, { PATH: `${dirname(process.execPath)}:${process.env.PATH ?? "/usr/bin:/bin"}`, ...extra });
}

/** What one process did. */
export interface Spawned {
  /** From spawn to exit, in ms (or to `stopWhen`, see {@link SpawnOptions}). */
  wallMs: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Peak RSS in KiB from `/usr/bin/time`, when asked for and available. */
  peakKiB: number | null;
}

/** Options of {@link spawnTimed}. */
export interface SpawnOptions {
  env: Record<string, string>;
  cwd: string;
  /** Written to stdin, which is then closed; without it stdin is closed at once. */
  input?: string;
  /** Run under `/usr/bin/time` to read the peak RSS (the wall time then includes the wrapper). */
  rss?: boolean;
  /** Killed after this long (default 60 s). */
  timeoutMs?: number;
  /**
   * Stops the clock when stdout first satisfies it and returns what to write to stdin
   * (which is then closed) so that the process can finish.
   */
  stopWhen?: (stdout: string) => string | undefined;
}

const timeBin = existsSync("/usr/bin/time") ? "/usr/bin/time" : null;
let rssFiles = 0;

/** Spawns `command args`, waits for it to finish and times it. */
export function spawnTimed(command: string, args: readonly string[], options: SpawnOptions): Promise<Spawned> {
  const rssFile = options.rss && timeBin ? join(scratch, `rss-${++rssFiles}`) : null;
  const [file, argv] = rssFile ? [timeBin!, ["-f", "%M", "-o", rssFile, command, ...args]] : [command, [...args]];
  return new Promise((resolve, reject) => {
    let stopped: number | null = null;
    const start = performance.now();
    const child = spawn(file, argv, { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      if (options.stopWhen && stopped === null) {
        const answer = options.stopWhen(stdout);
        if (answer !== undefined) {
          stopped = performance.now() - start;
          child.stdin.end(answer);
        }
      }
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    let exitedAt = 0;
    child.once("exit", () => (exitedAt = performance.now() - start));
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      const peakKiB = rssFile && existsSync(rssFile) ? Number(readFileSync(rssFile, "utf8").trim().split("\n").at(-1)) : null;
      resolve({ wallMs: stopped ?? exitedAt, code, signal, stdout, stderr, peakKiB });
    });
    if (!options.stopWhen) child.stdin.end(options.input ?? "");
    else if (options.input !== undefined) child.stdin.write(options.input);
  });
}

/** One command taking part in an interleaved comparison. */
export interface BenchCase {
  label: string;
  /** Runs the command once, checks that it did its job (throwing if not) and returns the run. */
  run(rss: boolean): Promise<Spawned>;
}

/** Wall times and peak RSS per case label. */
export type Samples = Map<string, { wallMs: number[]; peakKiB: number[] }>;

/** Largest number of rounds a bench accepts (keeps every loop bounded). */
export const MAX_ROUNDS = 500;

/** Reads a positive round count from `argv[index]`, bounded by {@link MAX_ROUNDS}. */
export function roundsArg(index: number, fallback: number): number {
  const value = process.argv[index] === undefined ? fallback : Number(process.argv[index]);
  if (!Number.isInteger(value) || value < 1 || value > MAX_ROUNDS) throw new Error(`runs must be an integer from 1 to ${MAX_ROUNDS}, got ${process.argv[index]}`);
  return value;
}

/**
 * Runs every case once per round, the starting case rotating from round to round:
 * `warmup` rounds first (not recorded; they fill Node's compile cache), then `runs` timed
 * rounds, then `rssRuns` rounds under `/usr/bin/time` for the peak RSS only.
 */
export async function interleave(cases: readonly BenchCase[], options: { runs: number; warmup: number; rssRuns: number }): Promise<Samples> {
  const samples: Samples = new Map(cases.map((item) => [item.label, { wallMs: [], peakKiB: [] }]));
  const total = options.warmup + options.runs + (timeBin ? options.rssRuns : 0);
  for (let round = 0; round < Math.min(total, MAX_ROUNDS * 2); round++) {
    const rss = round >= options.warmup + options.runs;
    for (let offset = 0; offset < cases.length; offset++) {
      const item = cases[(round + offset) % cases.length]!;
      const result = await item.run(rss);
      const sample = samples.get(item.label)!;
      if (rss) {
        if (result.peakKiB !== null) sample.peakKiB.push(result.peakKiB);
      } else if (round >= options.warmup) sample.wallMs.push(result.wallMs);
    }
  }
  return samples;
}

/** The `q` quantile (0..1) of `values`, by linear interpolation. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (position - low);
}

export const median = (values: readonly number[]): number => quantile(values, 0.5);

/** One line per case: median wall time, interquartile range, peak RSS. */
export function printSamples(samples: Samples, width = 44): void {
  for (const [label, { wallMs, peakKiB }] of samples) {
    const memory = peakKiB.length > 0 ? `, peak RSS ${(median(peakKiB) / 1024).toFixed(1)} MiB` : "";
    const spread = `p25–p75 ${quantile(wallMs, 0.25).toFixed(1)}–${quantile(wallMs, 0.75).toFixed(1)}`;
    console.log(`${label.padEnd(width)} median ${median(wallMs).toFixed(1).padStart(7)} ms (${spread}, ${wallMs.length} runs)${memory}`);
  }
}

/** Prints one line of a ladder: `ms` and what it is. */
export function printStep(what: string, ms: number): void {
  console.log(`  ${ms.toFixed(1).padStart(6)} ms  ${what}`);
}

/**
 * Prints what each step of a cumulative ladder adds over the one before it (differences of
 * the medians), starting from `baseline`; returns the last step's median.
 */
export function printLadder(samples: Samples, baseline: string, steps: readonly string[]): number {
  const m = (label: string) => median(samples.get(label)!.wallMs);
  console.log("\nWhat each part adds (differences of the medians):");
  printStep(baseline, m(baseline));
  let previous = m(baseline);
  for (const label of steps) {
    printStep(label, m(label) - previous);
    previous = m(label);
  }
  return previous;
}

/**
 * Prints `label / baseline` as the ratio of the medians, the median of the per-round
 * ratios (the two runs of a round are close in time, so this one shrugs off drift), and the
 * verdict against `budget` (judged on the ratio of the medians). Returns whether it is met.
 */
export function printRatio(samples: Samples, label: string, baseline: string, budget?: number): boolean {
  const a = samples.get(label)!.wallMs;
  const b = samples.get(baseline)!.wallMs;
  const ratio = median(a) / median(b);
  const paired = median(a.map((value, index) => value / b[index]!));
  const met = budget === undefined || ratio <= budget;
  const verdict = budget === undefined ? "" : `  budget ≤ ${budget.toFixed(1)}×: ${met ? "met" : "NOT MET"}`;
  console.log(`${label} / ${baseline}: ${ratio.toFixed(2)}× (per-round ratios: median ${paired.toFixed(2)}×)${verdict}`);
  return met;
}

/** `node -e 0` with the same Node, the baseline every ratio is taken against. */
export function nodeBaseline(home: string): BenchCase {
  return {
    label: "node -e 0",
    async run(rss) {
      const result = await spawnTimed(process.execPath, ["-e", "0"], { env: userEnv(home), cwd: home, rss });
      if (result.code !== 0) throw new Error(`node -e 0 failed (${result.code}): ${result.stderr}`);
      return result;
    },
  };
}

/** Fails with the process's output when it did not exit 0. */
export function expectSuccess(label: string, result: Spawned): Spawned {
  if (result.code !== 0) throw new Error(`${label} failed (code ${result.code}, signal ${result.signal}):\n${result.stdout}\n${result.stderr}`);
  return result;
}

/** The machine and Node the figures come from. */
export function printMachine(): void {
  const list = cpus();
  console.log(`Node ${process.version} (${process.execPath}), ${list.length} cores (${list[0]?.model ?? "?"}), ${process.platform} ${process.arch}`);
}
