// provideSandbox: a plugin's sandbox (a child executor process with its own root) receives
// every file and process operation of the builtin tools; the session's workspace on the
// host stays untouched.
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, realpathSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { Agent } from "../../src/agent/agent.ts";
import type { BubPlugin } from "../../src/kernel/hooks.ts";
import { HookRuntime } from "../../src/kernel/runtime.ts";
import type { StreamEvent } from "../../src/kernel/stream.ts";
import { defaultModelSettings } from "../../src/llm/settings.ts";
import { createDefaultTapeContext } from "../../src/tape/context.ts";
import { createMemoryTapeStore } from "../../src/tape/memory-store.ts";
import { builtinTools } from "../../src/tools/builtin/index.ts";
import { createShellManager } from "../../src/tools/builtin/shell-manager.ts";
import { runCommaCommand } from "../../src/tools/commands.ts";
import { createToolRegistry } from "../../src/tools/registry.ts";
import type { Tool } from "../../src/tools/tool.ts";
import { createExecutorSandbox, executorSandboxPlugin, type ExecutorSandbox } from "../support/executor-sandbox.ts";
import { reply } from "../support/fake-openai.ts";
import { useFakeOpenAI } from "../support/fake-openai-suite.ts";
import { kernelFramework } from "../support/framework.ts";
import { tempDir } from "../support/temp.ts";
import { call, toolContext } from "./support/tool-context.ts";

/** The builtin tools that touch files or processes: each must do so through the sandbox. */
const SANDBOXED = ["bash", "bash.output", "bash.kill", "fs.read", "fs.write", "fs.edit", "quit"];
/** The other builtin tools, and why none of them touches the session's files or processes. */
const NOT_SANDBOXED: Record<string, string> = {
  skill: "reads skills, bub's own configuration, on the host (as the system prompt does)",
  "tape.info": "the session tape, in bub's tape store",
  "tape.search": "the session tape, in bub's tape store",
  "tape.reset": "the session tape (its archive goes to bub's home)",
  "tape.handoff": "the session tape",
  "tape.anchors": "the session tape",
  "web.fetch": "the network, through bub's own guarded client",
  subagent: "runs another agent turn, which asks provideSandbox itself",
  "spill.read": "the spill sidecar of the session tape",
  help: "a constant text",
  model: "the turn state and the tape",
  reasoning_effort: "the turn state and the tape",
};

const textOf = (events: StreamEvent[]) => events.flatMap((event) => (event.kind === "text" ? [event.data.delta] : [])).join("");

describe("provideSandbox: the builtin tools in an executor process's own root", () => {
  const server = useFakeOpenAI();
  let workspace: { path: string; cleanup: () => Promise<void> };
  let box: { path: string; cleanup: () => Promise<void> };
  let sandbox: ExecutorSandbox;
  const shells = createShellManager({ killGraceMs: 500 });
  let tools: Tool[];

  before(async () => {
    workspace = await tempDir("bub-sandbox-ws-");
    box = await tempDir("bub-sandbox-root-");
    sandbox = createExecutorSandbox(box.path);
    tools = builtinTools({ shells });
  });
  after(async () => {
    await shells.terminateAll();
    await sandbox.close();
    await workspace.cleanup();
    await box.cleanup();
  });

  /** The builtin agent with the builtin tools, a fake model and the sandbox plugin. */
  async function agentWith(plugins: BubPlugin[]) {
    const framework = kernelFramework({ workspace: workspace.path, home: join(box.path, "..", "bub-home-unused") });
    const store = createMemoryTapeStore();
    await framework.registerPlugin({ name: "base", provideTapeStore: () => store, buildTapeContext: () => createDefaultTapeContext(), continuePrompt: () => "continue" }, "base");
    for (const plugin of plugins) await framework.registerPlugin(plugin);
    const settings = defaultModelSettings({ model: "fake:model", api_base: server.url, api_key: "sk-test" });
    const agent = new Agent({ framework, settings: () => settings, tools: createToolRegistry(tools), runCommand: runCommaCommand, client: { env: {}, sleep: async () => undefined } });
    return async (prompt: string) =>
      framework.running(async () => {
        const events: StreamEvent[] = [];
        for await (const event of await agent.runStream("test:1", prompt, { _runtime_workspace: workspace.path })) events.push(event);
        return events;
      });
  }

  it("runs the model's fs.write, fs.edit, fs.read and bash calls in the sandbox, not in the workspace", async () => {
    const seen: { sessionId: string; workspace: string }[] = [];
    const run = await agentWith([executorSandboxPlugin(sandbox, seen)]);
    server.script(
      reply.toolCalls([{ name: "fs_write", arguments: JSON.stringify({ path: "notes/a.txt", content: "hello from the model\n" }) }]),
      reply.toolCalls([{ name: "fs_edit", arguments: JSON.stringify({ path: "notes/a.txt", old: "hello", new: "bye" }) }]),
      reply.toolCalls([
        { name: "fs_read", arguments: JSON.stringify({ path: "/workspace/notes/a.txt" }) },
        { name: "bash", arguments: JSON.stringify({ cmd: "cat notes/a.txt; echo $BUB_SANDBOX; echo made > made.txt" }) },
      ]),
      reply.text("done"),
    );
    const events = await run("write, edit, read and run");
    assert.equal(textOf(events), "done");
    assert.deepEqual(seen, [{ sessionId: "test:1", workspace: workspace.path }], "asked once for the turn");
    assert.equal(readFileSync(join(box.path, "workspace", "notes", "a.txt"), "utf8"), "bye from the model", "fs.edit rewrites the lines it read");
    assert.equal(readFileSync(join(box.path, "workspace", "made.txt"), "utf8"), "made\n");
    assert.deepEqual(readdirSync(workspace.path), [], "nothing lands in the workspace on the host");
    const results = server.requests.at(-1)!.body.messages.filter((message) => message.role === "tool").map((message) => message.content);
    assert.deepEqual(results, ["wrote: /workspace/notes/a.txt", "edited: /workspace/notes/a.txt", "bye from the model", "bye from the modelexecutor"], "cat prints the edited file, which has no final newline");
    const ops = sandbox.journal().map((line) => line.split(" ")[0]);
    for (const op of ["stat", "write", "read", "exec"]) assert.ok(ops.includes(op), `the executor performed ${op}`);
  });

  it("runs comma commands in the sandbox too, and the host when no plugin answers", async () => {
    const boxed = await agentWith([{ name: "low", provideSandbox: () => null }, executorSandboxPlugin(sandbox), { name: "high", provideSandbox: () => undefined }]);
    assert.equal(textOf(await boxed(",bash cmd=pwd")), realpathSync(join(box.path, "workspace")));
    assert.equal(textOf(await boxed(",fs.read path=notes/a.txt")), "bye from the model");
    const hosted = await agentWith([{ name: "none", provideSandbox: () => null }]);
    assert.equal(textOf(await hosted(",bash cmd=pwd")), realpathSync(workspace.path));
  });

  it("keeps background shells in the sandbox: bash.output reads them, bash.kill and quit stop them there", async () => {
    const context = { ...toolContext({ session_id: "s-bg" }, { workspace: workspace.path }), sandbox };
    const started = String(await call(tools, "bash", { cmd: "echo started-in-$BUB_SANDBOX; exec sleep 30", background: true }, context));
    const id = started.replace("started: ", "");
    let output = "";
    for (let attempt = 0; attempt < 100 && !output.includes("started-in-executor"); attempt++) {
      output = String(await call(tools, "bash.output", { shell_id: id }, null));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.match(output, /started-in-executor/);
    assert.match(String(await call(tools, "bash.kill", { shell_id: id }, null)), /status: exited\nexit_code: -15/);
    const second = String(await call(tools, "bash", { cmd: "exec sleep 30", background: true }, context)).replace("started: ", "");
    await call(tools, "quit", {}, context);
    assert.equal(shells.get(second).status, "exited");
    assert.ok(sandbox.journal().filter((line) => line.startsWith("kill ")).length >= 2, "both stops went through the executor");
  });

  it("classifies every builtin tool: a file or process tool runs in the sandbox, the others touch neither", () => {
    const names = builtinTools({ shells }).map((tool) => tool.name).sort();
    assert.deepEqual(names, [...SANDBOXED, ...Object.keys(NOT_SANDBOXED)].sort(), "a new builtin tool must be classified here (and sandboxed if it touches files or processes)");
  });

  it("no builtin tool module reaches the host's files or processes but through the sandbox", async () => {
    const folder = fileURLToPath(new URL("../../src/tools/builtin/", import.meta.url));
    const allowed: Record<string, RegExp> = { "skill.ts": /skills\/(discovery|render)\.ts/ };
    const reaching = /from "node:(fs|fs\/promises|child_process)"|import\("node:(fs|fs\/promises|child_process)"\)|home-dir\.ts|skills\/discovery\.ts|skills\/render\.ts/;
    for (const file of readdirSync(folder).filter((name) => name.endsWith(".ts"))) {
      const source = await readFile(join(folder, file), "utf8");
      for (const line of source.split("\n").filter((text) => /\bimport\b(?! type)/.test(text) && reaching.test(text))) {
        assert.ok(allowed[file]?.test(line), `${file} reaches the host without the sandbox: ${line.trim()}`);
      }
    }
  });

  it("a failing sandbox fails only the tool call, with the file named", async () => {
    const context = { ...toolContext({}, { workspace: workspace.path }), sandbox };
    await assert.rejects(call(tools, "fs.read", { path: "missing.txt" }, context), /file not found: \/workspace\/missing\.txt/);
    assert.equal(existsSync(join(workspace.path, "missing.txt")), false);
  });
});

describe("the provideSandbox hook call", () => {
  const runtimeWith = (...plugins: BubPlugin[]) => {
    const runtime = new HookRuntime();
    plugins.forEach((plugin, index) => runtime.register(plugin, plugin.name ?? `p${index}`));
    return runtime;
  };
  const fake = (name: string) => createExecutorSandbox(`/nonexistent/${name}`);

  it("takes the later-registered plugin's answer, skips null ones, and passes the session and workspace", async () => {
    const seen: { sessionId: string; workspace: string }[] = [];
    const low = fake("low");
    const runtime = runtimeWith(executorSandboxPlugin(low, seen), { name: "high", provideSandbox: () => null });
    assert.equal(await runtime.call("provideSandbox", { sessionId: "s", workspace: "/ws" }), low);
    assert.deepEqual(seen, [{ sessionId: "s", workspace: "/ws" }]);
    const top = fake("top");
    assert.equal(await runtimeWith(executorSandboxPlugin(low, [], "low"), executorSandboxPlugin(top, [], "top")).call("provideSandbox", { sessionId: "s", workspace: "/ws" }), top);
  });

  it("answers nothing when no plugin does (the agent then uses the host), and refuses an answer that is no sandbox", async () => {
    assert.equal(await runtimeWith().call("provideSandbox", { sessionId: "s", workspace: "/ws" }), undefined);
    await assert.rejects(runtimeWith({ name: "bad", provideSandbox: () => ({ name: "x" }) as never }).call("provideSandbox", { sessionId: "s", workspace: "/ws" }), /hook.provideSandbox must return a Sandbox or null/);
  });
});
