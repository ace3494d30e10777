// Cold start of `bub --help` as a whole process: median wall time and peak memory.
// Build first (npm run build), then run: node bench/cli/cold-start.ts [runs]
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

// The package's bin (the esbuild bundle, dist/bin/bub.js).
const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { bin: { bub: string } };
const bin = fileURLToPath(new URL(`../../${pkg.bin.bub}`, import.meta.url));
if (!existsSync(bin)) throw new Error(`${pkg.bin.bub} is missing: run \`npm run build\` first`);
const runs = Number(process.argv[2] ?? 30);
const env = { PATH: process.env.PATH, HOME: mkdtempSync(join(tmpdir(), "bub-bench-")), BUB_HOME: mkdtempSync(join(tmpdir(), "bub-bench-home-")) };
const timeBin = existsSync("/usr/bin/time") ? "/usr/bin/time" : null;

function measure(args: string[]): { wall: number[]; peakKiB: number[] } {
  const wall: number[] = [];
  const peakKiB: number[] = [];
  for (let index = 0; index < runs + 3; index++) {
    const start = process.hrtime.bigint();
    const result = timeBin
      ? spawnSync(timeBin, ["-f", "%M", process.execPath, ...args], { env, encoding: "utf8" })
      : spawnSync(process.execPath, args, { env, encoding: "utf8" });
    const elapsed = Number(process.hrtime.bigint() - start) / 1e6;
    if (result.status !== 0) throw new Error(`run failed: ${result.stderr}`);
    if (index < 3) continue; // warm-up (fills the compile cache)
    wall.push(elapsed);
    if (timeBin) peakKiB.push(Number(result.stderr.trim().split("\n").at(-1)));
  }
  return { wall, peakKiB };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
for (const [label, args] of [["node -e 0", ["-e", "0"]], ["bub --help", [bin, "--help"]], ["bub --version", [bin, "--version"]]] as const) {
  const { wall, peakKiB } = measure([...args]);
  const memory = peakKiB.length ? `, peak RSS ${(median(peakKiB) / 1024).toFixed(1)} MiB` : "";
  console.log(`${label.padEnd(14)} median ${median(wall).toFixed(1)} ms over ${runs} runs${memory}`);
}
