// Where the installed `bub --help` spends its time. Packs and installs the package, then:
//
// 1. A cumulative ladder of processes, run alternately: each step does what the step before
//    it did and imports (or runs) one more part, in the order the real start loads them, so
//    the difference between two steps' medians prices that part. Every step enables the
//    compile cache first, as the bin does. Off the ladder: yaml imported alone, and the
//    installed bin through its `#!/usr/bin/env node` line.
// 2. CPU profiles (`node --cpu-prof`) of `--help` without and with a config.yml: self time
//    grouped by package, by bub-ts folder and by Node internals, averaged over the profiles.
//
//   node bench/cli/help-profile.ts [runs=20] [profiles=10]
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { expectSuccess, installBub, interleave, median, printLadder, printMachine, printSamples, printStep, roundsArg, spawnTimed, tempDir, userEnv, type BenchCase } from "../support/processes.ts";

const runs = roundsArg(2, 20);
const profiles = roundsArg(3, 10);
const { prefix, bin } = await installBub();
printMachine();

const packageDir = join(prefix, "node_modules", "bub-ts");
const binFile = realpathSync(bin);
const fromPackage = createRequire(join(packageDir, "package.json"));
const url = (file: string) => JSON.stringify(pathToFileURL(file).href);
const dist = (file: string) => url(join(packageDir, "dist", file));

const home = tempDir("home");
const configured = join(home, "configured");
mkdirSync(configured);
const configText = "model: openai:gpt-4o-mini\napi_key: sk-bench\nenabled_channels: telegram\nstream_output: false\n";
writeFileSync(join(configured, "config.yml"), configText);
let fresh = 0;
const freshHome = () => join(home, `fresh-${++fresh}`);

function run(label: string, command: string, args: string[], bubHome: () => string, helpOut = false): BenchCase {
  return {
    label,
    async run(rss) {
      const result = expectSuccess(label, await spawnTimed(command, args, { env: userEnv(home, { BUB_HOME: bubHome() }), cwd: home, rss }));
      if (helpOut && !result.stdout.startsWith("Usage: bub")) throw new Error(`${label}: no help on stdout`);
      return result;
    },
  };
}

/** `node --input-type=module -e "<compile cache on>; <statements>"` */
const script = (label: string, statements: string[], bubHome = freshHome, helpOut = false) =>
  run(label, process.execPath, ["--input-type=module", "-e", ["import module from 'node:module'; module.enableCompileCache?.();", ...statements].join("\n")], bubHome, helpOut);
const importAll = (builtins: string[]) => `await Promise.all(${JSON.stringify(builtins)}.map((specifier) => import(specifier)));`;

// The ladder: label and the statements it adds to the step before.
const ladder: [string, string[]][] = [
  ["compile cache on, ES module -e script", []],
  ["+ builtins commander imports (events, child_process, path, fs, process, util)", [importAll(["node:events", "node:child_process", "node:path", "node:fs", "node:process", "node:util"])]],
  ["+ builtins bub's modules add (async_hooks, os, url, module)", [importAll(["node:async_hooks", "node:os", "node:url", "node:module"])]],
  ["+ commander", [`await import(${url(fromPackage.resolve("commander"))});`]],
  ["+ bub kernel (dist/kernel/framework.js and its imports)", [`await import(${dist("kernel/framework.js")});`]],
  ["+ settings, plugin discovery, builtin plugin, channels, commands (dist/builtin/create.js)", [`await import(${dist("builtin/create.js")});`]],
  ["+ CLI (dist/cli/program.js)", [`const { main } = await import(${dist("cli/program.js")});`]],
  ["+ main(['--help'])", ["process.exitCode = await main(['--help']);"]],
];
const NODE = "node -e 0";
const YAML = "yaml alone: import + parse config.yml";
const HELP = "node dist/bin/bub.js --help";
const HELP_CONFIG = "node dist/bin/bub.js --help, config.yml";
const SHEBANG = "installed bin (#!/usr/bin/env node) --help";
const cases: BenchCase[] = [run(NODE, process.execPath, ["-e", "0"], freshHome)];
ladder.forEach(([label], index) => cases.push(script(label, ladder.slice(0, index + 1).flatMap(([, statements]) => statements), freshHome, index === ladder.length - 1)));
cases.push(
  script(YAML, [`const { parse } = await import(${url(fromPackage.resolve("yaml"))});`, `parse(${JSON.stringify(configText)});`]),
  run(HELP, process.execPath, [binFile, "--help"], freshHome, true),
  run(HELP_CONFIG, process.execPath, [binFile, "--help"], () => configured, true),
  run(SHEBANG, bin, ["--help"], freshHome, true),
);
const samples = await interleave(cases, { runs, warmup: 3, rssRuns: 0 });
printSamples(samples, 78);
const m = (label: string) => median(samples.get(label)!.wallMs);
const last = printLadder(samples, NODE, ladder.map(([label]) => label));
printStep(`the bin itself (${HELP} minus the last step)`, m(HELP) - last);
printStep("a config.yml (the bin with one minus without)", m(HELP_CONFIG) - m(HELP));
printStep(`(${YAML}, over the first step)`, m(YAML) - m(ladder[0]![0]));
printStep("the #!/usr/bin/env node line (installed bin minus node dist/bin/bub.js)", m(SHEBANG) - m(HELP));

// 2. CPU profiles.
function category(callFrame: { url: string; functionName: string }): string {
  const { url: file, functionName } = callFrame;
  if (!file) return functionName; // (program), (garbage collector), (idle), native functions
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)/.exec(file);
  if (match) return match[1] === "bub-ts" ? `bub-ts ${match[2]!.split("/").slice(0, 2).join("/")}` : match[1]!;
  if (file.startsWith("node:internal/modules/")) return `node: module loader (${file.slice("node:internal/modules/".length).split("/")[0]!.replace(/\.js$/, "")})`;
  if (file === "node:internal/bootstrap/realm") return "node: compiling builtin modules (internal/bootstrap/realm)";
  if (file === "node:internal/url") return "node: URL parsing (internal/url)";
  if (file.startsWith("node:internal/")) return "node: other internals";
  return `node: ${file}`;
}

interface CpuProfile {
  nodes: { id: number; callFrame: { url: string; functionName: string } }[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

function profileSummary(label: string, bubHome: () => string): void {
  const dir = tempDir("cpu-prof");
  for (let index = 0; index < profiles + 1; index++) {
    // The first run refills the compile cache that profiling flags may invalidate; it is not counted.
    const out = index === 0 ? tempDir("cpu-prof-warmup") : dir;
    const result = spawnSync(process.execPath, ["--cpu-prof", "--cpu-prof-interval", "100", "--cpu-prof-dir", out, binFile, "--help"], { env: userEnv(home, { BUB_HOME: bubHome() }), cwd: home, encoding: "utf8", timeout: 60_000 });
    if (result.status !== 0) throw new Error(`${label}: ${result.stderr}`);
  }
  const totals = new Map<string, number>();
  let span = 0;
  const files = readdirSync(dir).filter((name) => name.endsWith(".cpuprofile"));
  for (const name of files) {
    const profile = JSON.parse(readFileSync(join(dir, name), "utf8")) as CpuProfile;
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    span += (profile.endTime - profile.startTime) / 1000;
    profile.samples.forEach((id, index) => {
      const key = category(byId.get(id)!.callFrame);
      totals.set(key, (totals.get(key) ?? 0) + (profile.timeDeltas[index] ?? 0) / 1000);
    });
  }
  console.log(`\nCPU profile of ${label}: ${(span / files.length).toFixed(1)} ms profiled per run (profiling slows it down), self time per run, mean of ${files.length}:`);
  for (const [key, ms] of [...totals].sort((a, b) => b[1] - a[1])) if (ms / files.length >= 0.3) printStep(key, ms / files.length);
}
profileSummary("bub --help (no config.yml)", freshHome);
profileSummary("bub --help (config.yml)", () => configured);
