// Cold start of the installed `bub --help` as a whole process, against `node -e 0` with the
// same Node. Packs the checkout and installs the tarball into a temporary prefix (what users
// run), then runs `node -e 0`, `bub --help` with a fresh BUB_HOME (no config.yml), `bub
// --help` with a config.yml as `bub onboard` writes it and `bub --version` in turn, round
// after round. Budget: `bub --help` ≤ 2.0× `node -e 0`, with and without config.yml.
//
//   node bench/cli/cold-start.ts [runs=30]
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expectSuccess, installBub, interleave, nodeBaseline, printMachine, printRatio, printSamples, roundsArg, spawnTimed, tempDir, userEnv, type BenchCase } from "../support/processes.ts";

const BUDGET = 2.0;
const runs = roundsArg(2, 30);
const { bin } = await installBub();
printMachine();

// A user's HOME and working folder without a package.json (plugin discovery reads one).
const home = tempDir("home");
// What `bub onboard` writes for the openai provider with a key and the telegram channel.
const configured = join(home, "configured");
mkdirSync(configured);
writeFileSync(join(configured, "config.yml"), "model: openai:gpt-4o-mini\napi_key: sk-bench\nenabled_channels: telegram\nstream_output: false\n");
let fresh = 0;

function bub(label: string, args: string[], bubHome: () => string, expect: RegExp): BenchCase {
  return {
    label,
    async run(rss) {
      const result = expectSuccess(label, await spawnTimed(bin, args, { env: userEnv(home, { BUB_HOME: bubHome() }), cwd: home, rss }));
      if (!expect.test(result.stdout) || result.stderr !== "") throw new Error(`${label}: unexpected output:\n${result.stdout}\n${result.stderr}`);
      return result;
    },
  };
}

const HELP = "bub --help (fresh BUB_HOME, no config.yml)";
const HELP_CONFIG = "bub --help (config.yml from onboard)";
const samples = await interleave(
  [
    nodeBaseline(home),
    // A BUB_HOME that does not exist yet, new for every run: a first start.
    bub(HELP, ["--help"], () => join(home, `fresh-${++fresh}`), /^Usage: bub/m),
    bub(HELP_CONFIG, ["--help"], () => configured, /^Usage: bub/m),
    bub("bub --version", ["--version"], () => configured, /^\d+\.\d+\.\d+/),
  ],
  { runs, warmup: 3, rssRuns: 5 },
);
printSamples(samples);
printRatio(samples, HELP, "node -e 0", BUDGET);
printRatio(samples, HELP_CONFIG, "node -e 0", BUDGET);
printRatio(samples, "bub --version", "node -e 0");
