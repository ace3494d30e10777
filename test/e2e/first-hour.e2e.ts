/**
 * What a new user does in the first hour, on the installed package: the README's library
 * example saves its turn to the tape, and the README's way of putting `bub` on PATH from a
 * clone works.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { tsBlocks } from "../support/markdown.ts";
import { cleanEnv, installedPackage, runBub, tempHome } from "./support/installed.ts";

const execute = promisify(execFile);
const root = fileURLToPath(new URL("../../", import.meta.url));

describe("the README on the installed package", () => {
  let openai: FakeOpenAI;
  let listing: FakeOpenAI;
  before(async () => {
    await installedPackage();
    openai = await startFakeOpenAI();
    listing = await startFakeOpenAI({ models: ["large-model", "small-model"] });
  });
  after(() => Promise.all([openai.close(), listing.close()]));

  it("the library example, saved as turn.mjs, runs a turn with a tool call and writes it to the tape", async () => {
    const { prefix } = await installedPackage();
    const home = await tempHome();
    try {
      const project = join(home.path, "project");
      await mkdir(project);
      await symlink(join(prefix, "node_modules"), join(project, "node_modules"), "dir");
      const readme = await readFile(join(root, "README.md"), "utf8");
      const example = tsBlocks(readme)[0];
      assert.ok(example?.includes("createBub"), "the README's first example is the library one");
      await writeFile(join(project, "turn.mjs"), example);
      openai.script(reply.toolCalls([{ name: "bash", arguments: JSON.stringify({ cmd: "echo looked" }) }]), reply.text("Hello there."));
      const bubHome = join(home.path, ".bub");
      const { stdout } = await execute(process.execPath, ["turn.mjs"], {
        cwd: project,
        timeout: 30_000,
        env: cleanEnv(home.path, { BUB_HOME: bubHome, BUB_MODEL: "local:any", BUB_API_BASE: openai.url, BUB_API_KEY: "sk-readme" }),
      });
      assert.equal(stdout.trim(), "Hello there.");
      const files = (await readdir(join(bubHome, "tapes"))).filter((name) => name.endsWith(".jsonl"));
      const tapes = (await Promise.all(files.map((name) => readFile(join(bubHome, "tapes", name), "utf8")))).join("\n");
      assert.match(tapes, /Answer in one sentence/, "the user's message is on the tape");
      assert.match(tapes, /echo looked/, "the tool call is on the tape");
      assert.match(tapes, /Hello there\./, "the answer is on the tape");
    } finally {
      await home.cleanup();
    }
  });

  it("`,model` and `bub models` show the models the plugins offer (provideModelOptions)", async () => {
    const home = await tempHome();
    try {
      // Outside the folder bub runs in: a plugin file inside an untrusted workspace would not load.
      const plugin = join(home.path, "offer.mjs");
      const project = join(home.path, "project");
      await mkdir(project);
      await writeFile(plugin, 'export default { name: "offer", provideModelOptions: () => ({ models: [{ id: "local:offered-model", name: "Offered" }] }) };\n');
      const env = { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "local:large-model", BUB_API_BASE: listing.url, BUB_API_KEY: "sk-e2e", BUB_PLUGINS: plugin };
      const shown = await runBub(["run", ",model"], { home: home.path, cwd: project, env });
      assert.equal(shown.code, 0, shown.stderr);
      assert.match(shown.stdout, /Models offered:\n {2}- local:offered-model \(Offered\)\n {2}\* local:large-model\n/);
      const listed = await runBub(["models"], { home: home.path, cwd: project, env });
      assert.equal(listed.code, 0, listed.stderr);
      assert.equal(listed.stdout, "local:offered-model\nlocal:large-model\nlocal:small-model\n");
    } finally {
      await home.cleanup();
    }
  });

  it("text the model says beside a tool call is kept: on the tape, in the next request, in tape show and the export", async () => {
    const home = await tempHome();
    try {
      const env = { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "local:any", BUB_API_BASE: openai.url, BUB_API_KEY: "sk-e2e" };
      openai.script(reply.toolCalls([{ id: "call_look", name: "bash", arguments: JSON.stringify({ cmd: "echo looked" }) }], { text: "Let me look." }), reply.text("Found it."));
      const run = await runBub(["run", "look around"], { home: home.path, env });
      assert.equal(run.code, 0, run.stderr);
      const second = openai.requests.at(-1)!.body.messages.find((message) => message.role === "assistant");
      assert.equal(second?.content, "Let me look.");
      const show = await runBub(["tape", "show", "cli:local"], { home: home.path, env });
      assert.equal(show.code, 0, show.stderr);
      assert.match(show.stdout, /Let me look\.[\s\S]*echo looked/);
      const exported = await runBub(["tape", "export", "cli:local", "--format", "markdown"], { home: home.path, env });
      assert.equal(exported.code, 0, exported.stderr);
      assert.match(exported.stdout, /Let me look\.[\s\S]*echo looked/);
    } finally {
      await home.cleanup();
    }
  });

  it("`,help` lists every tool the agent has; `bub --help` lists `hooks` and describes bub as the README does", async () => {
    const home = await tempHome();
    try {
      const env = { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "local:any", BUB_API_BASE: openai.url, BUB_API_KEY: "sk-e2e" };
      const help = await runBub(["run", ",help"], { home: home.path, env });
      assert.equal(help.code, 0, help.stderr);
      for (const tool of ["web.fetch", "subagent", "schedule.add", "schedule.list", "schedule.remove", "tape.reset", "spill.read", "bash.output"]) assert.match(help.stdout, new RegExp(`\\n  ${tool.replace(".", "\\.")} +\\S`), `,help lists ${tool}`);
      const usage = await runBub(["--help"], { home: home.path, env });
      assert.match(usage.stdout, /\n {2}hooks +show every hook/);
      const readme = await readFile(join(root, "README.md"), "utf8");
      const tagline = /^Usage: bub .*\n\n(.+)\n/.exec(usage.stdout)?.[1] ?? "";
      assert.match(readme, new RegExp(tagline.replace(/^Bub: a /, "").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")), "the README says what --help says");
    } finally {
      await home.cleanup();
    }
  });

  it("a missing key names `bub onboard` once; `bub trust` of a folder with only a package.json reads right", async () => {
    const home = await tempHome();
    try {
      const env = { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "openrouter:openrouter/free" };
      const run = await runBub(["run", "hi"], { home: home.path, env });
      assert.equal(run.code, 1);
      assert.match(run.stderr, /^bub: No API key for provider 'openrouter' — set BUB_OPENROUTER_API_KEY or BUB_API_KEY, or run `bub onboard`\.?\n$/);
      assert.equal(run.stderr.split("bub onboard").length, 2, run.stderr);
      const folder = join(home.path, "project");
      await mkdir(folder);
      await writeFile(join(folder, "package.json"), "{}\n");
      const trust = await runBub(["trust", folder], { home: home.path, env });
      assert.equal(trust.code, 0, trust.stderr);
      assert.match(trust.stdout, /: its package\.json loads from now on, until it changes\.\n$/);
    } finally {
      await home.cleanup();
    }
  });

  it("`npm install -g .` from a clone puts a working `bub` on PATH", async () => {
    const home = await tempHome();
    try {
      const global = join(home.path, "global");
      // The README's line, with --prefix so the test does not touch the machine's global folder.
      await execute("npm", ["install", "-g", ".", "--prefix", global, "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: root, timeout: 120_000 });
      const env = cleanEnv(home.path, { PATH: `${join(global, "bin")}:${dirname(process.execPath)}:/usr/bin:/bin` });
      const { stdout } = await execute("bub", ["--version"], { env, timeout: 30_000 });
      const { version } = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as { version: string };
      assert.equal(stdout.trim(), version);
      const help = await execute("bub", ["--help"], { env, timeout: 30_000 });
      assert.match(help.stdout, /gateway/);
    } finally {
      await home.cleanup();
    }
  });
});
