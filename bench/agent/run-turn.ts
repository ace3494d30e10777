// One agent turn as a whole process, bub against the pi coding agent, both talking to the
// same fake OpenAI-compatible server on 127.0.0.1 in this process.
//
// Packs the checkout and installs the tarball into a temporary prefix (what users run),
// installs pi (`@mariozechner/pi-coding-agent`) into bench/.cache/pi on first use, points
// pi at the fake server through a models.json in a temporary agent dir, then runs, round
// after round with the starting command rotating: `node -e 0`, `bub run hello`, a bub turn
// with a tool call (fs.read, then the answer) and `pi -p hello`. Every run must print the
// answer the fake server sent it and make exactly the expected requests.
// Budget: `bub run hello` ≤ 0.2× `pi -p hello`.
//
//   node bench/agent/run-turn.ts [runs=20]
//   BENCH_PI_VERSION=x.y.z node bench/agent/run-turn.ts   # another pi release
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { reply, startFakeOpenAI, type FakeOpenAI, type FakeReply } from "../../test/support/fake-openai.ts";
import { expectSuccess, installBub, interleave, nodeBaseline, printMachine, printRatio, printSamples, roundsArg, spawnTimed, tempDir, userEnv, type BenchCase, type Spawned } from "../support/processes.ts";

const BUDGET = 0.2;
const PI_PACKAGE = "@mariozechner/pi-coding-agent";
const PI_VERSION = process.env.BENCH_PI_VERSION ?? "0.73.1";
const runs = roundsArg(2, 20);

/** Installs pi into bench/.cache/pi (git-ignored) unless that version is there already. */
async function ensurePi(): Promise<string> {
  const cache = fileURLToPath(new URL("../.cache/pi/", import.meta.url));
  const manifest = join(cache, "node_modules", PI_PACKAGE, "package.json");
  const installedVersion = existsSync(manifest) ? (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version : null;
  if (installedVersion !== PI_VERSION) {
    console.log(`installing ${PI_PACKAGE}@${PI_VERSION} into ${cache} ...`);
    mkdirSync(cache, { recursive: true });
    if (!existsSync(join(cache, "package.json"))) writeFileSync(join(cache, "package.json"), `${JSON.stringify({ name: "bub-bench-pi", private: true }, null, 2)}\n`);
    await promisify(execFile)("npm", ["install", "--prefix", cache, "--no-audit", "--no-fund", "--save-exact", `${PI_PACKAGE}@${PI_VERSION}`], { maxBuffer: 16 * 1024 * 1024 });
  }
  const bin = join(cache, "node_modules", ".bin", "pi");
  if (!existsSync(bin)) throw new Error(`npm install did not create ${bin}`);
  return bin;
}

const [{ bin: bubBin }, piBin] = await Promise.all([installBub(), ensurePi()]);
console.log(`pi ${PI_VERSION}: ${piBin}`);
printMachine();

const server = await startFakeOpenAI();
const home = tempDir("home");
const workspace = tempDir("workspace");
writeFileSync(join(workspace, "notes.txt"), "buy milk\n");

// pi's config lives in a temporary agent dir (the user's ~/.pi is never read): one custom
// OpenAI-compatible provider whose only model is the fake server's.
const piAgentDir = join(home, ".pi", "agent");
mkdirSync(piAgentDir, { recursive: true });
writeFileSync(
  join(piAgentDir, "models.json"),
  JSON.stringify({
    providers: {
      local: {
        baseUrl: server.url,
        api: "openai-completions",
        apiKey: "sk-bench",
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
        models: [{ id: "any" }],
      },
    },
  }),
);
writeFileSync(join(piAgentDir, "settings.json"), JSON.stringify({ defaultProvider: "local", defaultModel: "any", enableInstallTelemetry: false }));

let sequence = 0;
let expected = 0;

/**
 * Scripts the fake server's replies, runs the command and checks that it printed the
 * answer meant for this run and made exactly as many requests as there are replies.
 */
async function turn(label: string, prompt: string, replies: (answer: string) => FakeReply[], start: () => Promise<Spawned>, check?: (server: FakeOpenAI, first: number) => void): Promise<Spawned> {
  const answer = `Hello from the fake model, run ${++sequence}.`;
  const before = server.requests.length;
  const scripted = replies(answer);
  server.script(...scripted);
  const result = expectSuccess(label, await start());
  if (!result.stdout.includes(answer)) throw new Error(`${label}: the fake server's answer is missing from stdout:\n${result.stdout}\n${result.stderr}`);
  const made = server.requests.length - before;
  if (made !== scripted.length || server.pending() !== 0) throw new Error(`${label}: ${made} request(s) for ${scripted.length} scripted replies`);
  for (const request of server.requests.slice(before)) if (request.body.model !== "any") throw new Error(`${label}: asked for model ${request.body.model}`);
  if (!JSON.stringify(server.requests[before]!.body.messages).includes(prompt)) throw new Error(`${label}: the prompt did not reach the model`);
  expected += scripted.length;
  check?.(server, before);
  return result;
}

function bubRun(label: string, message: string, replies: (answer: string) => FakeReply[], check?: (server: FakeOpenAI, first: number) => void): BenchCase {
  return {
    label,
    run(rss) {
      // A BUB_HOME of its own for every run: a file tape store created from nothing.
      const env = userEnv(home, { BUB_HOME: tempDir("bub-home"), BUB_MODEL: "local:any", BUB_API_BASE: server.url, BUB_API_KEY: "sk-bench" });
      return turn(label, message, replies, () => spawnTimed(bubBin, ["run", message], { env, cwd: workspace, rss }), check);
    },
  };
}

const PLAIN = "bub run hello";
const PI = "pi -p hello";
const samples = await interleave(
  [
    nodeBaseline(home),
    bubRun(PLAIN, "hello", (answer) => [reply.text(answer, { usage: { prompt_tokens: 900, completion_tokens: 8 } })]),
    bubRun(
      "bub run, tool call (fs.read) + answer",
      "what do my notes say?",
      (answer) => [reply.toolCalls([{ name: "fs_read", arguments: '{"path":"notes.txt"}' }]), reply.text(answer)],
      (fake, first) => {
        if (!JSON.stringify(fake.requests[first + 1]!.body.messages).includes("buy milk")) throw new Error("the tool result did not reach the second model call");
      },
    ),
    {
      label: PI,
      run(rss) {
          // pi keeps its sessions below the agent dir; a new session folder for every run.
        const env = userEnv(home, { PI_CODING_AGENT_DIR: piAgentDir, PI_CODING_AGENT_SESSION_DIR: tempDir("pi-sessions"), PI_OFFLINE: "1" });
        return turn(PI, "hello", (answer) => [reply.text(answer, { usage: { prompt_tokens: 900, completion_tokens: 8 } })], () => spawnTimed(piBin, ["-p", "hello"], { env, cwd: workspace, rss }));
      },
    },
  ],
  { runs, warmup: 2, rssRuns: 3 },
);
await server.close();
printSamples(samples);
printRatio(samples, PLAIN, PI, BUDGET);
printRatio(samples, PLAIN, "node -e 0");
printRatio(samples, PI, "node -e 0");
console.log(`fake server: ${server.requests.length} requests (${expected} expected), each run printed the answer scripted for it`);
