/**
 * provideSandbox with the installed binary: a plugin named in BUB_PLUGINS runs the builtin
 * tools in a child executor process with its own root; the model's file writes and shell
 * commands land there, the folder bub runs in stays untouched, and `bub run` still ends.
 */
import assert from "node:assert/strict";
import { mkdir, readFile, readdir, realpath, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";

const SANDBOX_MODULE = new URL("../support/executor-sandbox.ts", import.meta.url).href;

describe("a sandbox plugin with the installed package", () => {
  let model: FakeOpenAI;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let env: Record<string, string>;
  let box: string;
  let workspace: string;
  before(async () => {
    await installedPackage();
    model = await startFakeOpenAI();
    home = await tempHome();
    box = join(home.path, "box");
    workspace = join(home.path, "ws");
    await mkdir(workspace);
    const plugin = join(home.path, "sandbox-plugin.ts");
    await writeFile(
      plugin,
      `import { createExecutorSandbox, executorSandboxPlugin } from ${JSON.stringify(SANDBOX_MODULE)};\n` +
        `export default executorSandboxPlugin(createExecutorSandbox(${JSON.stringify(box)}));\n`,
    );
    env = { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "local:any", BUB_API_BASE: model.url, BUB_API_KEY: "sk-test", BUB_PLUGINS: plugin };
  });
  after(() => Promise.all([model.close(), home.cleanup()]));

  it("bub hooks names the plugin for provideSandbox", async () => {
    const hooks = await runBub(["hooks"], { home: home.path, cwd: workspace, env });
    assert.equal(hooks.code, 0, hooks.stderr);
    assert.match(hooks.stdout, /^provideSandbox: executor-sandbox$/m);
  });

  it("bub run: the model's fs.write and bash run in the sandbox, and the run ends", async () => {
    model.script(
      reply.toolCalls([{ name: "fs_write", arguments: JSON.stringify({ path: "hello.txt", content: "hi from the model\n" }) }]),
      reply.toolCalls([{ name: "bash", arguments: JSON.stringify({ cmd: "cat hello.txt; echo $BUB_SANDBOX" }) }]),
      reply.text("All done."),
    );
    const run = await runBub(["run", "write and show a file"], { home: home.path, cwd: workspace, env });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /All done\./);
    assert.equal(await readFile(join(box, "workspace", "hello.txt"), "utf8"), "hi from the model\n");
    assert.deepEqual(await readdir(workspace), [], "nothing written where bub runs");
    const results = model.requests.at(-1)!.body.messages.filter((message) => message.role === "tool").map((message) => message.content);
    assert.deepEqual(results, ["wrote: /workspace/hello.txt", "hi from the model\nexecutor"]);
  });

  it("bub run with a comma command runs it in the sandbox too", async () => {
    const run = await runBub(["run", ",bash cmd=pwd"], { home: home.path, cwd: workspace, env });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.equal(run.stdout, `[cli:local]\n${await realpath(join(box, "workspace"))}\n`);
  });
});
