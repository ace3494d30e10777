/**
 * Writing a plugin, as an author tries it with the installed `bub`: a `.ts` plugin in a
 * folder `npm init -y` made, the channel example of docs/channels.md, a `buildPrompt` that
 * wraps the builtin's with `next()`, a failing `saveState`, and a listed plugin that breaks.
 * The model is a fake OpenAI-compatible server on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { freePort } from "../support/ports.ts";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";
import { pollUntil, startBub, type LiveBub } from "./support/live.ts";

const docs = new URL("../../docs/", import.meta.url);

/** The ```ts block of a docs page that contains `marker`. */
async function docsBlock(page: string, marker: string): Promise<string> {
  const text = await readFile(new URL(page, docs), "utf8");
  const block = [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!).find((code) => code.includes(marker));
  assert.ok(block, `docs/${page} has a ts block with ${marker}`);
  return block;
}

/** Every message text the model was sent in one request, joined. */
function sentText(request: { body: { messages: Record<string, unknown>[] } }): string {
  return request.body.messages.map((message) => (typeof message.content === "string" ? message.content : JSON.stringify(message.content))).join("\n");
}

describe("writing a plugin (installed package)", () => {
  let openai: FakeOpenAI;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let env: Record<string, string>;
  let live: LiveBub | null = null;
  before(async () => {
    await installedPackage();
    openai = await startFakeOpenAI();
  });
  after(() => openai.close());
  beforeEach(async () => {
    openai.requests.length = 0;
    home = await tempHome();
    env = { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "local:any", BUB_API_BASE: openai.url };
    // The plugins live next to the workspace, not in it (a path inside an untrusted workspace is skipped).
    await mkdir(join(home.path, "ws"));
  });
  afterEach(async () => {
    live?.kill();
    live = null;
    await home.cleanup();
    assert.equal(openai.pending(), 0, "every scripted reply was used");
  });

  it("a .ts plugin in a \"type\": \"commonjs\" folder, using zod it did not install, answers a tool call", async () => {
    const folder = join(home.path, "my-plugin");
    await mkdir(folder);
    // What `npm init -y` writes today.
    await writeFile(join(folder, "package.json"), JSON.stringify({ name: "my-plugin", version: "1.0.0", main: "index.js", type: "commonjs" }, null, 2));
    await writeFile(
      join(folder, "index.ts"),
      `import { z } from "zod";
import { defineTool, definePlugin, registerTool, type BubFramework } from "bub-ts";

export default (framework: BubFramework) => {
  registerTool(framework, defineTool({
    name: "dice.roll",
    description: "Roll a die",
    parameters: z.object({ sides: z.number().int().min(2) }),
    run: ({ sides }) => \`rolled \${sides - 1} of \${sides}\`,
  }));
  return definePlugin({ name: "dice" });
};
`,
    );
    openai.script(reply.toolCalls([{ id: "call_1", name: "dice_roll", arguments: '{"sides":6}' }]), reply.text("You rolled a 5."));
    const result = await runBub(["run", "roll a die"], { home: home.path, cwd: join(home.path, "ws"), env: { ...env, BUB_PLUGINS: join(folder, "index.ts") } });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.equal(result.stdout, "[cli:local]\nYou rolled a 5.\n");
    assert.doesNotMatch(result.stderr, /Failed to|import statement/);
    assert.ok(openai.requests[0]!.body.tools?.some((tool) => tool.function.name === "dice_roll"), "the model is offered the plugin's tool");
    assert.match(sentText(openai.requests[1]!), /rolled 5 of 6/);
  });

  it("the channel example of docs/channels.md gets its reply back on its own channel", async () => {
    const plugin = join(home.path, "plugins", "webhook.ts");
    await mkdir(join(home.path, "plugins"));
    await writeFile(plugin, await docsBlock("channels.md", 'readonly name = "webhook"'));
    const port = await freePort();
    openai.script(reply.text("Hello back."));
    live = await startBub(["gateway", "--enable-channel", "webhook"], { home: home.path, cwd: join(home.path, "ws"), env: { ...env, BUB_PLUGINS: plugin, WEBHOOK_PORT: String(port) } });
    const answer = await pollUntil(async () => {
      try {
        const response = await fetch(`http://127.0.0.1:${port}/`, { method: "POST", body: "hello" });
        return await response.text();
      } catch {
        return undefined;
      }
    }, "the webhook channel to listen", { timeoutMs: 15_000, intervalMs: 100 });
    assert.equal(answer, "accepted\n");
    await live.waitForStdout(/^reply to hook: Hello back\.$/m, 15_000);
    assert.doesNotMatch(live.stderr(), /undelivered/);
    live.child.kill("SIGTERM");
    const result = await live.exited(10_000);
    assert.equal(result.code, 0, result.stderr);
  });

  it("a buildPrompt that wraps the builtin's with next() adds its line and keeps ,help working", async () => {
    const plugin = join(home.path, "tone.ts");
    await writeFile(plugin, await docsBlock("plugins.md", 'name: "tone"'));
    openai.script(reply.text("Short answer."));
    const turn = await runBub(["run", "what is 2+2?"], { home: home.path, cwd: join(home.path, "ws"), env: { ...env, BUB_PLUGINS: plugin } });
    assert.equal(turn.code, 0, turn.stderr);
    assert.equal(turn.stdout, "[cli:local]\nShort answer.\n");
    const prompt = sentText(openai.requests[0]!);
    assert.match(prompt, /what is 2\+2\?\nAnswer in one short paragraph\./);
    assert.match(prompt, /---Date: /, "the builtin's context header is still there");

    const help = await runBub(["run", ",help"], { home: home.path, cwd: join(home.path, "ws"), env: { ...env, BUB_PLUGINS: plugin } });
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^\[cli:local\]\nCommands use ',' at line start\./);
    assert.equal(openai.requests.length, 1, ",help never reaches the model");
  });

  it("the turn-state example of docs/plugins.md carries its declared key from loadState to buildPrompt", async () => {
    const plugin = join(home.path, "visits.ts");
    await writeFile(plugin, await docsBlock("plugins.md", 'name: "visits"'));
    openai.script(reply.text("Welcome."));
    const turn = await runBub(["run", "hello"], { home: home.path, cwd: join(home.path, "ws"), env: { ...env, BUB_PLUGINS: plugin } });
    assert.equal(turn.code, 0, turn.stderr);
    assert.equal(turn.stdout, "[cli:local]\nWelcome.\n");
    assert.match(sentText(openai.requests[0]!), /hello\n\(visit 1 of this session\)/);
  });

  it("a JavaScript plugin written against the reference: its loadState keys merged, a _runtime_* key left out with a warning, the view still the context's", async () => {
    const plugin = join(home.path, "legacy.mjs");
    await writeFile(
      plugin,
      `export default {
  name: "legacy",
  loadState: () => ({ "legacy.note": "from js", _runtime_workspace: "/elsewhere" }),
  buildPrompt: ({ message, state }) => \`\${message.content} note=\${state["legacy.note"]} ws=\${state._runtime_workspace}\`,
};
`,
    );
    openai.script(reply.text("Noted."));
    const turn = await runBub(["run", "hi"], { home: home.path, cwd: join(home.path, "ws"), env: { ...env, BUB_PLUGINS: plugin } });
    assert.equal(turn.code, 0, turn.stderr);
    assert.equal(turn.stdout, "[cli:local]\nNoted.\n");
    assert.match(sentText(openai.requests[0]!), new RegExp(`^hi note=from js ws=${join(home.path, "ws").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "m"));
    const log = await readFile(join(home.path, ".bub", "logs", "bub.log"), "utf8");
    assert.match(log, /hook\.load_state_keys_skipped keys=_runtime_workspace adapter=legacy/);
  });

  it("a throwing saveState still delivers the reply, and the error names the plugin and the hook", async () => {
    const plugin = join(home.path, "audit-log.ts");
    await writeFile(plugin, `export default { name: "audit-log", saveState() { throw new Error("log server unreachable"); } };\n`);
    openai.script(reply.text("Here is your answer."));
    const result = await runBub(["run", "question"], { home: home.path, cwd: join(home.path, "ws"), env: { ...env, BUB_PLUGINS: plugin } });
    assert.equal(result.stdout, "[cli:local]\nHere is your answer.\n");
    assert.match(result.stderr, /^bub: plugin 'audit-log' failed in saveState: log server unreachable — fix the plugin or take it out \(`bub hooks` shows where each plugin comes from\)$/m);
    assert.equal(result.code, 1, "the failure is reported in the exit code");
  });

  it("a plugin listed in BUB_PLUGINS that fails to load makes bub run and bub gateway exit 1 with the reason", async () => {
    const plugin = join(home.path, "broken.ts");
    await writeFile(plugin, `import "./missing-helper.ts";\nexport default { name: "broken" };\n`);
    for (const args of [["run", "hi"], ["gateway"]]) {
      const result = await runBub(args, { home: home.path, cwd: join(home.path, "ws"), env: { ...env, BUB_PLUGINS: plugin } });
      assert.equal(result.code, 1, `${args[0]}: ${result.stdout}${result.stderr}`);
      assert.match(result.stderr, /^bub: plugin 'broken' \(.*broken\.ts\) listed in BUB_PLUGINS or config\.yml did not load: Cannot find module .*missing-helper\.ts.* — fix it, or take it out of BUB_PLUGINS \(or plugins: in config\.yml\)$/m);
      assert.equal(result.stdout, "");
    }
    assert.equal(openai.requests.length, 0);
  });
});
