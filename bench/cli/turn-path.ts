// The files of `src/` one `bub run "hello"` goes through (docs/architecture.md §4(a)): runs
// the checkout's `src/bin/bub.ts` against the fake OpenAI server with NODE_V8_COVERAGE and
// counts the `src/` modules the process loads, and those it runs code of beyond their top
// level; `bub run --help` is the baseline of start-up. Prints the second list, which the
// architecture page's table is read from. Another checkout (e.g. main's) can be measured
// with the same script.
//
//   node bench/cli/turn-path.ts [checkout=this one]
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { reply, startFakeOpenAI } from "../../test/support/fake-openai.ts";

const root = process.argv[2] ? join(process.argv[2], "/") : fileURLToPath(new URL("../../", import.meta.url));

interface Coverage {
  result: { url: string; functions: { functionName: string; ranges: { count: number }[] }[] }[];
}

/** `src/` modules the run loaded, and those with a function other than the module's top level called. */
async function measure(args: string[], env: Record<string, string>): Promise<{ loaded: string[]; ran: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), "bub-path-"));
  const coverage = join(dir, "coverage");
  try {
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(process.execPath, [join(root, "src/bin/bub.ts"), ...args], {
        env: { PATH: process.env.PATH ?? "", HOME: dir, BUB_HOME: join(dir, ".bub"), NODE_V8_COVERAGE: coverage, ...env },
        cwd: dir,
        stdio: ["ignore", "ignore", "inherit"],
      });
      child.on("close", resolve);
    });
    if (code !== 0) throw new Error(`bub ${args.join(" ")} exited ${code}`);
    const loaded = new Set<string>();
    const ran = new Set<string>();
    for (const name of readdirSync(coverage)) {
      const report = JSON.parse(readFileSync(join(coverage, name), "utf8")) as Coverage;
      for (const script of report.result) {
        if (!script.url.startsWith("file://")) continue;
        const file = relative(root, fileURLToPath(script.url));
        if (!file.startsWith("src/")) continue;
        loaded.add(file);
        if (script.functions.slice(1).some((fn) => fn.ranges[0]?.count > 0)) ran.add(file);
      }
    }
    return { loaded: [...loaded].sort(), ran: [...ran].sort() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const server = await startFakeOpenAI();
try {
  server.script(reply.text("Hello there"));
  const env = { BUB_MODEL: "fake:any", BUB_API_BASE: server.url, BUB_API_KEY: "sk-bench" };
  const help = await measure(["run", "--help"], env);
  const turn = await measure(["run", "hello"], env);
  const extra = turn.ran.filter((file) => !help.ran.includes(file));
  process.stdout.write(`bub run --help: ${help.loaded.length} src modules loaded, code run in ${help.ran.length}\n`);
  process.stdout.write(`bub run "hello": ${turn.loaded.length} src modules loaded, code run in ${turn.ran.length} (${extra.length} more than --help)\n\n`);
  for (const file of turn.ran) process.stdout.write(`${help.ran.includes(file) ? " " : "+"} ${file}\n`);
} finally {
  await server.close();
}
