// `bub run` as a whole process against the fake OpenAI-compatible server, with the file
// tape store in a temporary BUB_HOME: median wall time and peak memory of a plain turn
// and of a tool-calling turn (fs.read, then the answer).
// Build first (npm run build), then run: node bench/agent/run-turn.ts [runs]
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { reply, startFakeOpenAI, type FakeReply } from "../../test/support/fake-openai.ts";

// The package's bin (the esbuild bundle).
const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { bin: { bub: string } };
const bin = fileURLToPath(new URL(`../../${pkg.bin.bub}`, import.meta.url));
if (!existsSync(bin)) throw new Error(`${pkg.bin.bub} is missing: run \`npm run build\` first`);
const runs = Number(process.argv[2] ?? 20);
const timeBin = existsSync("/usr/bin/time") ? "/usr/bin/time" : null;
const server = await startFakeOpenAI();
const workspace = mkdtempSync(join(tmpdir(), "bub-bench-ws-"));
writeFileSync(join(workspace, "notes.txt"), "buy milk\n");

function once(message: string, home: string): Promise<{ wall: number; peakKiB: number | null }> {
  const env = { PATH: process.env.PATH, HOME: workspace, BUB_HOME: home, BUB_MODEL: "fake:any", BUB_API_BASE: server.url, BUB_API_KEY: "sk-bench" };
  const args = [bin, "run", message];
  const start = process.hrtime.bigint();
  const child = timeBin ? spawn(timeBin, ["-f", "%M", process.execPath, ...args], { env, cwd: workspace }) : spawn(process.execPath, args, { env, cwd: workspace });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on("close", (code) => {
      const wall = Number(process.hrtime.bigint() - start) / 1e6;
      if (code !== 0 || !stdout.startsWith("[cli:local]")) return reject(new Error(`bub run failed (${code}): ${stdout}${stderr}`));
      resolve({ wall, peakKiB: timeBin ? Number(stderr.trim().split("\n").at(-1)) : null });
    });
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const scenarios: [string, string, () => FakeReply[]][] = [
  ["plain turn", "hello", () => [reply.text("Hello! How can I help?", { usage: { prompt_tokens: 900, completion_tokens: 8 } })]],
  ["tool-calling turn", "what do my notes say?", () => [reply.toolCalls([{ name: "fs_read", arguments: '{"path":"notes.txt"}' }]), reply.text("They say: buy milk.")]],
];
for (const [label, message, script] of scenarios) {
  const wall: number[] = [];
  const peak: number[] = [];
  for (let index = 0; index < runs + 2; index++) {
    server.script(...script());
    const home = mkdtempSync(join(tmpdir(), "bub-bench-home-"));
    const result = await once(message, home);
    if (index < 2) continue; // warm-up (fills the compile cache)
    wall.push(result.wall);
    if (result.peakKiB !== null) peak.push(result.peakKiB);
  }
  const memory = peak.length ? `, peak RSS ${(median(peak) / 1024).toFixed(1)} MiB` : "";
  console.log(`bub run (${label})`.padEnd(30) + ` median ${median(wall).toFixed(1)} ms over ${runs} runs${memory}`);
}
await server.close();
