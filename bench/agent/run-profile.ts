// What the installed `bub run hello` costs next to the dependencies a turn cannot do without.
// Packs and installs the package, starts the fake OpenAI-compatible server, then runs, round
// after round with the starting command rotating:
//
// 1. A cumulative ladder of processes over the installed package's dependencies: each step
//    does what the step before it did plus one more part, in the order a turn needs them, so
//    the difference between two steps' medians prices that part. Every step turns on the
//    compile cache first, as the bin does, and imports from the installed package's folder,
//    so it loads the same files bub loads. The last step streams one answer from the fake
//    server through @ai-sdk/openai-compatible over an undici EnvHttpProxyAgent, as bub's model
//    transport does: what a turn costs before any of bub's own code runs.
// 2. `bub run hello` itself (the installed bin run by node, fresh BUB_HOME every run).
//
//   node bench/agent/run-profile.ts [runs=20]
import { mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { reply, startFakeOpenAI } from "../../test/support/fake-openai.ts";
import { expectSuccess, installBub, interleave, median, printLadder, printMachine, printSamples, roundsArg, spawnTimed, tempDir, userEnv, type BenchCase } from "../support/processes.ts";

const runs = roundsArg(2, 20);
const { prefix, bin } = await installBub();
printMachine();

const packageDir = join(prefix, "node_modules", "bub-ts");
const binFile = realpathSync(bin);
const server = await startFakeOpenAI();
const home = tempDir("home");
const workspace = join(home, "workspace");
mkdirSync(workspace);
let sequence = 0;

/** Scripts this run's answer, runs the process and checks that it printed the answer. */
function answering(label: string, start: (env: Record<string, string>) => Promise<Awaited<ReturnType<typeof spawnTimed>>>): BenchCase {
  return {
    label,
    async run() {
      const answer = `Hello from the fake model, run ${++sequence}.`;
      server.script(reply.text(answer, { usage: { prompt_tokens: 900, completion_tokens: 8 } }));
      const result = expectSuccess(label, await start(userEnv(home, { BENCH_API_BASE: server.url })));
      if (!result.stdout.includes(answer) || server.pending() !== 0) throw new Error(`${label}: the fake server's answer is missing from stdout:\n${result.stdout}\n${result.stderr}`);
      return result;
    },
  };
}

/** A ladder step: `node --input-type=module -e "<compile cache on>; <statements>"`, run in the package folder. */
function step(label: string, statements: string[], request: boolean): BenchCase {
  const args = ["--input-type=module", "-e", ["import module from 'node:module'; module.enableCompileCache?.();", ...statements].join("\n")];
  if (request) return answering(label, (env) => spawnTimed(process.execPath, args, { env, cwd: packageDir }));
  return { label, run: async () => expectSuccess(label, await spawnTimed(process.execPath, args, { env: userEnv(home), cwd: packageDir })) };
}

// The ladder: label and the statements it adds to the step before.
const ladder: [string, string[]][] = [
  ["compile cache on, ES module -e script", []],
  ["+ commander", ["await import('commander');"]],
  ["+ zod: imported, one object schema built and parsed", ["const { z } = await import('zod');", "z.object({ model: z.string().default('m'), max_tokens: z.number().int().positive().default(1) }).parse({});"]],
  ["+ yaml: imported, one SKILL.md front matter parsed", ["const { parseDocument } = await import('yaml');", "parseDocument('name: a-skill\\ndescription: What it does\\n').toJS();"]],
  ["+ Node's fetch classes (globalThis.Headers)", ["globalThis.Headers;"]],
  ["+ undici (the package: EnvHttpProxyAgent, Pool)", ["const { EnvHttpProxyAgent, Pool } = await import('undici');"]],
  ["+ @ai-sdk/openai-compatible", ["const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');"]],
  [
    "+ one answer streamed from the fake server over an undici dispatcher",
    [
      "const dispatcher = new EnvHttpProxyAgent({ clientFactory: (origin, options) => new Pool(origin, options) });",
      "const provider = createOpenAICompatible({ name: 'local', baseURL: process.env.BENCH_API_BASE, apiKey: 'sk-bench', fetch: (input, init) => fetch(input, { ...init, dispatcher }) });",
      "const { stream } = await provider.chatModel('any').doStream({ prompt: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }] });",
      "let text = '';",
      "for await (const part of stream) if (part.type === 'text-delta') text += part.delta;",
      "console.log(text);",
      "await dispatcher.close();",
    ],
  ],
];
const NODE = "node -e 0";
const BUB = "bub run hello (node dist/bin/bub.js)";
const cases: BenchCase[] = [{ label: NODE, run: async () => expectSuccess(NODE, await spawnTimed(process.execPath, ["-e", "0"], { env: userEnv(home), cwd: home })) }];
ladder.forEach(([label], index) => cases.push(step(label, ladder.slice(0, index + 1).flatMap(([, statements]) => statements), index === ladder.length - 1)));
cases.push(
  answering(BUB, (env) =>
    spawnTimed(process.execPath, [binFile, "run", "hello"], {
      env: { ...env, BUB_HOME: tempDir("bub-home"), BUB_MODEL: "local:any", BUB_API_BASE: server.url, BUB_API_KEY: "sk-bench" },
      cwd: workspace,
    }),
  ),
);
const samples = await interleave(cases, { runs, warmup: 2, rssRuns: 0 });
await server.close();
printSamples(samples, 72);
const m = (label: string) => median(samples.get(label)!.wallMs);
const floor = printLadder(samples, NODE, ladder.map(([label]) => label));
console.log(`\nThe dependencies and one streamed answer: ${floor.toFixed(1)} ms (${(floor / m(NODE)).toFixed(2)}× node -e 0)`);
console.log(`${BUB}: ${m(BUB).toFixed(1)} ms (${(m(BUB) / m(NODE)).toFixed(2)}× node -e 0), ${(m(BUB) - floor).toFixed(1)} ms above that floor`);
