/**
 * Routing outside the kernel, on the installed package: `bub run` is a one-shot channel that
 * every outbound reaches (a plugin's `dispatchOutbound` sees the reply it prints), and the
 * `askApproval` hook lets a plugin answer the approval policy's question where no channel
 * can ask. The agent is the builtin plugin itself, loaded only by the commands that run
 * turns: `bub --help` and a plugin's own command never load it.
 */
import assert from "node:assert/strict";
import { access, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";

const exists = (path: string) => access(path).then(() => true, () => false);

/** A plugin that records what reaches its dispatchOutbound and askApproval (approving), and adds a `hello` command. */
function pluginSource(log: string): string {
  return `import { appendFileSync } from "node:fs";
const record = (entry) => appendFileSync(${JSON.stringify(log)}, JSON.stringify(entry) + "\\n");
export default {
  name: "route",
  dispatchOutbound: ({ message }) => void record({ hook: "dispatchOutbound", content: message.content, kind: message.kind }),
  askApproval: ({ request }) => (record({ hook: "askApproval", tool: request.tool, channel: request.message.channel }), { approved: true, by: "route" }),
  registerCliCommands: ({ app }) => void app.command("hello").action(() => void process.stdout.write("hello from a plugin\\n")),
};
`;
}

/** The installed package's files a process ran code of (its V8 coverage), relative to the package. */
async function filesRun(coverage: string): Promise<string[]> {
  const files = new Set<string>();
  for (const name of await readdir(coverage)) {
    const report = JSON.parse(await readFile(join(coverage, name), "utf8")) as { result: { url: string }[] };
    for (const { url } of report.result) {
      const at = url.indexOf("/node_modules/bub-ts/");
      if (at >= 0) files.add(url.slice(at + "/node_modules/bub-ts/".length));
    }
  }
  return [...files].sort();
}

describe("routing outside the kernel (installed package)", () => {
  let model: FakeOpenAI;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let env: Record<string, string>;
  let log: string;
  let cwd: string;
  before(async () => {
    await installedPackage();
    model = await startFakeOpenAI();
    home = await tempHome();
    await mkdir(join(home.path, ".bub"), { recursive: true });
    // Outside the folder bub runs in: a plugin file inside an untrusted workspace would not load.
    cwd = join(home.path, "work");
    await mkdir(cwd);
    log = join(home.path, "route.jsonl");
    const plugin = join(home.path, "route.mjs");
    await writeFile(plugin, pluginSource(log));
    env = { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "local:any", BUB_API_BASE: model.url, BUB_API_KEY: "sk-test", BUB_PLUGINS: plugin };
  });
  after(() => Promise.all([model.close(), home.cleanup()]));

  const recorded = async () => (await readFile(log, "utf8")).trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);

  it("bub run prints the reply every channel plugin is sent; a plugin's askApproval answers the approval question", async () => {
    const marker = join(home.path, "approved-by-plugin");
    model.script(reply.toolCalls([{ name: "bash", arguments: JSON.stringify({ cmd: `touch ${marker} && echo made` }) }]), reply.text("Made it."));
    const run = await runBub(["run", "make a marker"], { home: home.path, cwd, env: { ...env, BUB_APPROVAL: "ask" } });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.equal(run.stdout, "[cli:local]\nMade it.\n");
    assert.equal(await exists(marker), true, "the plugin approved the call, so it ran");
    assert.deepEqual(await recorded(), [
      { hook: "askApproval", tool: "bash", channel: "cli" },
      { hook: "dispatchOutbound", content: "Made it.", kind: "normal" },
    ]);
  });

  it("bub --help loads no agent; a plugin's own command and bub run do, as the builtin plugin", async () => {
    const coverage = join(home.path, "coverage");
    const runWithCoverage = async (args: string[]) => {
      await rm(coverage, { recursive: true, force: true });
      const result = await runBub(args, { home: home.path, cwd, env: { ...env, NODE_V8_COVERAGE: coverage } });
      assert.equal(result.code, 0, result.stdout + result.stderr);
      return { result, files: await filesRun(coverage) };
    };
    const agentFiles = ["dist/agent/agent.js", "dist/builtin/agent-plugin.js", "dist/llm/model-client.js"];
    const help = await runWithCoverage(["--help"]);
    assert.match(help.result.stdout, /hello/);
    assert.ok(help.files.includes("dist/builtin/plugin.js"), help.files.join("\n"));
    assert.deepEqual(agentFiles.filter((file) => help.files.includes(file)), []);
    const hello = await runWithCoverage(["hello"]);
    assert.equal(hello.result.stdout, "hello from a plugin\n");
    // A plugin's command may run turns (processInbound), so the agent is there for it.
    assert.ok(hello.files.includes("dist/builtin/agent-plugin.js"), hello.files.join("\n"));
    model.script(reply.text("hi"));
    const run = await runWithCoverage(["run", "hello"]);
    assert.equal(run.result.stdout, "[cli:local]\nhi\n");
    assert.deepEqual(agentFiles.filter((file) => run.files.includes(file)), agentFiles);
    const hooks = await runBub(["hooks"], { home: home.path, cwd, env });
    assert.match(hooks.stdout, /^runModelStream: builtin$/m);
    assert.match(hooks.stdout, /^askApproval: route$/m);
  });
});
