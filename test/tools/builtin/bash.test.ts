// The shell tools: foreground runs with timeouts, background shells polled by offset,
// process-group termination, session ownership and UTF-8 decoding.
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it, mock } from "node:test";
import { bashTools } from "../../../src/tools/builtin/bash.ts";
import { sessionTools } from "../../../src/tools/builtin/session.ts";
import { createShellManager, type ShellManager } from "../../../src/tools/builtin/shell-manager.ts";
import { hostLauncher } from "../../../src/tools/host-isolation.ts";
import { processesGone, processesStarted, processesWith, uniqueSeconds } from "../../support/processes.ts";
import { tempDir } from "../../support/temp.ts";
import { call, errorOf, fakeAgent, toolContext } from "../support/tool-context.ts";

/** True while `pid` is a live (not zombie) process. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

function field(text: string, name: string): string {
  return text.split("\n").find((line) => line.startsWith(`${name}: `))!.slice(name.length + 2);
}

describe("bash tools", () => {
  let workspace: { path: string; cleanup: () => Promise<void> };
  let shells: ShellManager;
  let tools: ReturnType<typeof bashTools>;
  const state = () => ({ session_id: "s1" });

  before(async () => {
    workspace = await tempDir("bub-bash-");
    shells = createShellManager({ killGraceMs: 300 });
    tools = [...bashTools(shells), ...sessionTools(shells)];
  });
  after(async () => {
    await shells.terminateAll();
    await workspace.cleanup();
  });

  it("runs a command in the workspace and returns its trimmed output", async () => {
    assert.equal(await call(tools, "bash", { cmd: "pwd; echo '  done  '" }, toolContext(state(), { workspace: workspace.path })), `${workspace.path}\n  done`);
  });

  it("interleaves stderr with stdout and says (no output) when there is none", async () => {
    assert.equal(await call(tools, "bash", { cmd: "echo out; echo err >&2" }, toolContext(state(), { workspace: workspace.path })), "out\nerr");
    assert.equal(await call(tools, "bash", { cmd: "true" }, toolContext(state(), { workspace: workspace.path })), "(no output)");
  });

  it("reports a non-zero exit with the code and output", async () => {
    assert.equal(await errorOf(call(tools, "bash", { cmd: "echo nope; exit 3" }, toolContext(state(), { workspace: workspace.path }))), "command exited with code 3\noutput:\nnope");
    assert.equal(await errorOf(call(tools, "bash", { cmd: "exit 1" }, toolContext(state(), { workspace: workspace.path }))), "command exited with code 1\noutput:\n(no output)");
  });

  it("runs in cwd, resolved against the workspace, and rejects a missing one", async () => {
    execFileSync("mkdir", ["-p", join(workspace.path, "sub")]);
    assert.equal(await call(tools, "bash", { cmd: "pwd", cwd: "sub" }, toolContext(state(), { workspace: workspace.path })), join(workspace.path, "sub"));
    assert.equal(await errorOf(call(tools, "bash", { cmd: "pwd", cwd: "missing" }, toolContext(state(), { workspace: workspace.path }))), `working directory does not exist: ${join(workspace.path, "missing")}`);
  });

  it("terminates a command that outlives its timeout, even one that ignores SIGTERM", async () => {
    const seconds = uniqueSeconds();
    const pending = call(tools, "bash", { cmd: `trap '' TERM; sleep ${seconds} & wait`, timeout_seconds: 1 }, toolContext(state(), { workspace: workspace.path }));
    assert.ok((await processesStarted(`sleep ${seconds}`)).length > 0);
    assert.equal(await pending, "command timed out after 1 seconds and was terminated");
    assert.deepEqual(processesWith(seconds), [], "the shell and its sleep are gone");
    assert.equal(shells.ids().length, 0, "foreground shells are forgotten once they return");
  });

  it("terminates the shell when the turn is cancelled", async () => {
    const controller = new AbortController();
    const pending = call(tools, "bash", { cmd: "sleep 30" }, { ...toolContext(state(), { workspace: workspace.path }), signal: controller.signal });
    controller.abort(new Error("turn cancelled"));
    await assert.rejects(pending, /turn cancelled/);
    assert.equal(shells.ids().length, 0);
  });

  it("decodes UTF-8 characters split across reads", async () => {
    const output = await call(tools, "bash", { cmd: "printf '\\xe4\\xbd'; sleep 0.2; printf '\\xa0 ok'" }, toolContext(state(), { workspace: workspace.path }));
    assert.equal(output, "你 ok");
  });

  it("starts a background shell, polls it with offsets and keeps it readable after exit", async () => {
    const started = String(await call(tools, "bash", { cmd: "echo one; echo two", background: true }, toolContext(state(), { workspace: workspace.path })));
    const id = /^started: (bash-[0-9a-f]{8})$/.exec(started)![1]!;
    await shells.get(id).closed;
    const first = String(await call(tools, "bash.output", { shell_id: id }));
    assert.equal(first, `id: ${id}\nstatus: exited\nexit_code: 0\nnext_offset: 8\noutput:\none\ntwo`);
    const tail = String(await call(tools, "bash.output", { shell_id: id, offset: 4 }));
    assert.equal(field(tail, "next_offset"), "8");
    assert.ok(tail.endsWith("output:\ntwo"));
    const limited = String(await call(tools, "bash.output", { shell_id: id, offset: 0, limit: 3 }));
    assert.equal(field(limited, "next_offset"), "3");
    assert.ok(limited.endsWith("output:\none"));
    const past = String(await call(tools, "bash.output", { shell_id: id, offset: 100 }));
    assert.ok(past.endsWith("next_offset: 8\noutput:\n(no output)"));
  });

  it("forgets a finished shell once the retention period after its first poll ends", async () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    try {
      const local = createShellManager({ retentionMs: 60_000 });
      const localTools = bashTools(local);
      const id = String(await call(localTools, "bash", { cmd: "echo hi", background: true }, toolContext(state(), { workspace: workspace.path }))).slice("started: ".length);
      await local.get(id).closed;
      await call(localTools, "bash.output", { shell_id: id });
      mock.timers.tick(59_000);
      assert.match(String(await call(localTools, "bash.output", { shell_id: id })), /status: exited/);
      mock.timers.tick(1_000);
      assert.equal(await errorOf(call(localTools, "bash.output", { shell_id: id })), `unknown shell id: ${id}`);
    } finally {
      mock.timers.reset();
    }
  });

  it("reports unknown shell ids", async () => {
    assert.equal(await errorOf(call(tools, "bash.output", { shell_id: "bash-00000000" })), "unknown shell id: bash-00000000");
    assert.equal(await errorOf(call(tools, "bash.kill", { shell_id: "bsh-1" })), "unknown shell id: bsh-1");
  });

  it("kills a background shell together with its children", async () => {
    const fifo = join(workspace.path, "child.fifo");
    execFileSync("mkfifo", [fifo]);
    const seconds = uniqueSeconds(300);
    const started = String(await call(tools, "bash", { cmd: `sleep ${seconds} & echo started > ${fifo}; wait`, background: true }, toolContext(state(), { workspace: workspace.path })));
    const id = started.slice("started: ".length);
    assert.equal((await readFile(fifo, "utf8")).trim(), "started");
    assert.ok(processesWith(`sleep ${seconds}`).length > 0, "the child runs");
    const killed = String(await call(tools, "bash.kill", { shell_id: id }));
    assert.equal(killed, `id: ${id}\nstatus: exited\nexit_code: -15`);
    assert.deepEqual(await processesGone(seconds), [], "the shell and its child are gone");
    assert.match(String(await call(tools, "bash.output", { shell_id: id })), /status: exited\nexit_code: -15/);
  });

  it("quit stops only the shells of its own session", async () => {
    const mine = String(await call(tools, "bash", { cmd: "sleep 300", background: true }, toolContext(state(), { workspace: workspace.path }))).slice(9);
    const theirs = String(await call(tools, "bash", { cmd: "sleep 300", background: true }, toolContext({ ...state(), session_id: "s2" }, { workspace: workspace.path }))).slice(9);
    const agent = fakeAgent();
    assert.equal(await call(tools, "quit", {}, toolContext(state(), { workspace: workspace.path, agent })), "Session tasks stopped.");
    assert.deepEqual(agent.quits, ["s1"]);
    assert.equal(shells.get(mine).status, "exited");
    assert.equal(shells.get(theirs).status, "running");
    await call(tools, "bash.kill", { shell_id: theirs });
  });

  it("does not keep the process alive for a background shell, and kills it at exit", async () => {
    const module = new URL("../../../src/tools/builtin/shell-manager.ts", import.meta.url).href;
    const script = `import { createShellManager } from ${JSON.stringify(module)};
      const shell = createShellManager().start({ cmd: "sleep 300", cwd: ${JSON.stringify(workspace.path)}, background: true });
      console.log(shell.pid);`;
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ["--input-type=module", "-e", script], (error, out) => (error ? reject(error) : resolve(out))),
    );
    assert.equal(alive(Number(stdout.trim())), false);
  });

  describe("the process group of a call", () => {
    // A command may run in its own PID namespace, where `$$` and `$!` are not this process's
    // pids: its processes are found by a unique sleep duration in their command lines.

    it("kills a backgrounded child when the call times out", async () => {
      const seconds = uniqueSeconds();
      const pending = call(tools, "bash", { cmd: `sleep ${seconds} & sleep ${seconds}`, timeout_seconds: 1 }, toolContext(state(), { workspace: workspace.path }));
      assert.ok((await processesStarted(`sleep ${seconds}`)).length > 0);
      assert.equal(await pending, "command timed out after 1 seconds and was terminated");
      assert.deepEqual(await processesGone(seconds), [], "the shell and its background child are gone");
    });

    it("kills a backgrounded child when the call is aborted", async () => {
      const seconds = uniqueSeconds();
      const controller = new AbortController();
      const pending = call(tools, "bash", { cmd: `sleep ${seconds} & sleep ${seconds}` }, { ...toolContext(state(), { workspace: workspace.path }), signal: controller.signal });
      await processesStarted(`sleep ${seconds}`);
      controller.abort(new Error("turn cancelled"));
      await assert.rejects(pending, /turn cancelled/);
      assert.deepEqual(await processesGone(seconds), [], "the shell and its background child are gone");
    });

    it("kills a nohup child left behind when the call ends normally", async () => {
      const seconds = uniqueSeconds();
      const result = await call(tools, "bash", { cmd: `nohup sleep ${seconds} > /dev/null 2>&1 & echo started` }, toolContext(state(), { workspace: workspace.path }));
      assert.equal(result, "started");
      assert.deepEqual(await processesGone(seconds), []);
    });

    it("kills what a finished background shell left running: with it in a PID namespace, else at shutdown", async () => {
      const local = createShellManager({ killGraceMs: 300, shell: "/bin/sh" });
      const seconds = uniqueSeconds();
      const file = join(workspace.path, "background.started");
      const shell = local.start({ cmd: `nohup sleep ${seconds} > /dev/null 2>&1 & echo started > ${file}`, cwd: workspace.path, background: true });
      await shell.closed;
      assert.equal(readFileSync(file, "utf8"), "started\n");
      if ((await hostLauncher("/bin/sh")).kind === "namespace") {
        assert.deepEqual(await processesGone(seconds), [], "the namespace ends with its shell");
      } else {
        assert.ok(processesWith(`sleep ${seconds}`).length > 0, "the child outlives its shell");
        await local.terminateAll();
        assert.deepEqual(await processesGone(seconds), []);
      }
    });
  });

  it("terminateAll stops every running shell", async () => {
    const local = createShellManager();
    const shell = local.start({ cmd: "sleep 300", cwd: workspace.path });
    await local.terminateAll();
    assert.equal(shell.status, "exited");
  });
});
