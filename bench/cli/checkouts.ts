// `bub run hello` (or `bub --help`) of two checkouts side by side, each started from its
// `src/bin/bub.ts` against the fake OpenAI server, interleaved round by round (two warm-up
// rounds left out): the before/after of a change to the command's start and turn path.
//
//   node bench/cli/checkouts.ts <checkout A> <checkout B> [runs=15] [run|help]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { reply, startFakeOpenAI } from "../../test/support/fake-openai.ts";

const roots = process.argv.slice(2, 4);
if (roots.length !== 2) throw new Error("usage: node bench/cli/checkouts.ts <checkout A> <checkout B> [runs] [run|help]");
const runs = Number(process.argv[4] ?? 15);
const args = process.argv[5] === "help" ? ["--help"] : ["run", "hello"];
const server = await startFakeOpenAI();

/** Wall time of one process, in a fresh HOME and BUB_HOME. */
function timed(root: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const dir = mkdtempSync(join(tmpdir(), "bub-checkouts-"));
    const env = { PATH: process.env.PATH ?? "", HOME: dir, BUB_HOME: join(dir, ".bub"), BUB_MODEL: "fake:any", BUB_API_BASE: server.url, BUB_API_KEY: "sk-bench" };
    const started = performance.now();
    const child = spawn(process.execPath, [join(root, "src/bin/bub.ts"), ...args], { env, cwd: dir, stdio: "ignore" });
    child.on("close", (code) => {
      rmSync(dir, { recursive: true, force: true });
      if (code === 0) resolve(performance.now() - started);
      else reject(new Error(`${root}: bub ${args.join(" ")} exited ${code}`));
    });
  });
}

const times = new Map<string, number[]>(roots.map((root) => [root, []]));
try {
  for (let round = 0; round < runs + 2; round++) {
    for (const root of roots) {
      server.script(reply.text("hi"));
      const ms = await timed(root);
      if (round >= 2) times.get(root)?.push(ms);
    }
  }
} finally {
  await server.close();
}
const at = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))].toFixed(0);
for (const [root, samples] of times) {
  const sorted = samples.toSorted((a, b) => a - b);
  process.stdout.write(`${root}: bub ${args.join(" ")} median ${at(sorted, 0.5)} ms (p25 ${at(sorted, 0.25)}, p75 ${at(sorted, 0.75)}, ${sorted.length} runs)\n`);
}
