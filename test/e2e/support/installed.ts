/**
 * The packed and installed `bub-ts` package that the end-to-end suite drives.
 *
 * `test/e2e/run.ts` packs the checkout once (`npm pack`, which builds `dist/` through the
 * `prepare` script), installs the tarball into a fresh temporary prefix with
 * `npm install <tarball>` and passes that prefix in `BUB_E2E_PREFIX` to every e2e file. A
 * file run on its own (`node --test test/e2e/x.e2e.ts`) packs and installs for itself.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const execute = promisify(execFile);
const root = fileURLToPath(new URL("../../..", import.meta.url));

/** A folder holding `node_modules/bub-ts` installed from the packed tarball. */
export interface InstalledPackage {
  readonly prefix: string;
  /** The installed `bub` binary (`node_modules/.bin/bub`). */
  readonly bin: string;
  /** The tarball `npm pack` made. */
  readonly tarball: string;
}

/** Packs the checkout into `dir` and installs the tarball into `dir/prefix`. */
export async function packAndInstall(dir: string): Promise<InstalledPackage> {
  const { stdout } = await execute("npm", ["pack", "--silent", "--pack-destination", dir], { cwd: root, maxBuffer: 16 * 1024 * 1024 });
  const name = stdout.trim().split("\n").at(-1)!;
  const tarball = join(dir, name);
  const prefix = join(dir, "prefix");
  await execute("mkdir", ["-p", prefix]);
  await writeFile(join(prefix, "package.json"), `${JSON.stringify({ name: "bub-e2e-prefix", private: true }, null, 2)}\n`);
  await execute("npm", ["install", "--no-audit", "--no-fund", "--silent", tarball], { cwd: prefix, maxBuffer: 16 * 1024 * 1024 });
  return { prefix, bin: join(prefix, "node_modules", ".bin", "bub"), tarball };
}

let installed: Promise<InstalledPackage> | undefined;

/** The package this run installed (from `BUB_E2E_PREFIX`), or one packed for this process. */
export function installedPackage(): Promise<InstalledPackage> {
  installed ??= (async () => {
    const prefix = process.env.BUB_E2E_PREFIX;
    if (prefix) {
      const dir = join(prefix, "..");
      const tarball = (await readdir(dir)).find((name) => name.endsWith(".tgz"));
      return { prefix, bin: join(prefix, "node_modules", ".bin", "bub"), tarball: join(dir, tarball ?? "missing.tgz") };
    }
    const dir = await mkdtemp(join(tmpdir(), "bub-e2e-"));
    process.once("exit", () => void rm(dir, { recursive: true, force: true }));
    return packAndInstall(dir);
  })();
  return installed;
}

/** What a finished `bub` process left. */
export interface BubResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Options of {@link runBub}. */
export interface RunOptions {
  /** Variables added to the clean environment (see {@link cleanEnv}). */
  env?: Record<string, string>;
  cwd?: string;
  /** Written to stdin, which is then closed; without it stdin is closed at once. */
  input?: string;
  /** Kill the process after this long (default 30 s): a hang fails the test, not the run. */
  timeoutMs?: number;
}

/**
 * The environment a user's shell would give `bub`: PATH and HOME, no `BUB_*`, proxy or
 * model-provider variables from the machine running the tests.
 */
export function cleanEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, LANG: "C.UTF-8", NO_COLOR: "1" };
  return { ...env, ...extra };
}

/** Runs the installed `bub` with `args` and collects its output. */
export async function runBub(args: readonly string[], options: RunOptions & { home: string }): Promise<BubResult> {
  const { bin } = await installedPackage();
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd: options.cwd ?? options.home, env: cleanEnv(options.home, options.env), stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 30_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    // bub may exit before it reads its stdin: the EPIPE of that write is no failure.
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.input ?? "");
  });
}

/** A fresh temporary folder to use as HOME (and, below it, BUB_HOME) for one test. */
export async function tempHome(): Promise<{ path: string; cleanup: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), "bub-e2e-home-"));
  return { path, cleanup: () => rm(path, { recursive: true, force: true }) };
}
