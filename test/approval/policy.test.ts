// The approval policy: what it asks about, how it asks through the turn's channel, what the
// model reads on a no, and that it is there only with `approval: ask`.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { approvalErrors, approvalNeed } from "../../src/approval/index.ts";
import { createBub } from "../../src/builtin/create.ts";
import { ChannelMessage } from "../../src/channels/message.ts";
import { AgentHooks } from "../../src/agent/interceptors.ts";
import type { ApprovalAnswer, ApprovalRequest } from "../../src/kernel/approval.ts";
import { deny, proceed, replace, type ToolCall } from "../../src/kernel/interception.ts";
import type { BubFramework } from "../../src/kernel/framework.ts";
import type { BubPlugin } from "../../src/kernel/hooks.ts";
import { tempDir } from "../support/temp.ts";

const call = (tool: string, args: Record<string, unknown>): ToolCall => ({ runId: "run-1", tool, arguments: args });

describe("what needs approval", () => {
  it("every bash call, whatever it runs and wherever", async () => {
    assert.deepEqual(await approvalNeed(call("bash", { cmd: "ls" }), "/tmp"), { reason: "runs a shell command", summary: "ls" });
    assert.deepEqual(await approvalNeed(call("bash", { cmd: "make", cwd: "sub" }), "/tmp"), { reason: "runs a shell command", summary: "make (in sub)" });
  });

  it("writes and edits outside the workspace, not inside it; other tools never", async () => {
    const dir = await tempDir();
    try {
      const workspace = join(dir.path, "ws");
      await mkdir(join(workspace, "src"), { recursive: true });
      for (const tool of ["fs_write", "fs.write", "fs_edit", "fs.edit"]) {
        assert.equal(await approvalNeed(call(tool, { path: "notes.md", content: "x" }), workspace), null, `${tool} inside`);
        assert.equal(await approvalNeed(call(tool, { path: join(workspace, "src/new/deep.ts") }), workspace), null, `${tool} absolute inside`);
        assert.deepEqual(await approvalNeed(call(tool, { path: "../outside.md" }), workspace), { reason: "writes outside the workspace", summary: join(dir.path, "outside.md") });
        assert.deepEqual(await approvalNeed(call(tool, { path: "/etc/hosts" }), workspace), { reason: "writes outside the workspace", summary: "/etc/hosts" });
      }
      // A sibling whose name starts like the workspace is outside it.
      assert.notEqual(await approvalNeed(call("fs_write", { path: `${workspace}-other/a.txt` }), workspace), null);
      for (const tool of ["fs_read", "web_fetch", "tape_info", "bash_output"]) assert.equal(await approvalNeed(call(tool, { path: "/etc/passwd" }), workspace), null, tool);
    } finally {
      await dir.cleanup();
    }
  });

  it("follows symbolic links: a link inside the workspace that points out of it is outside", async () => {
    const dir = await tempDir();
    try {
      const workspace = join(dir.path, "ws");
      await mkdir(join(dir.path, "elsewhere"), { recursive: true });
      await mkdir(workspace);
      await writeFile(join(dir.path, "elsewhere", "file.txt"), "x");
      await symlink(join(dir.path, "elsewhere"), join(workspace, "link"));
      assert.notEqual(await approvalNeed(call("fs_write", { path: "link/file.txt" }), workspace), null);
      assert.notEqual(await approvalNeed(call("fs_write", { path: "link/new/file.txt" }), workspace), null);
      // The workspace reached through a link of its own is still the workspace.
      await symlink(workspace, join(dir.path, "ws-link"));
      assert.equal(await approvalNeed(call("fs_write", { path: "a.txt" }), join(dir.path, "ws-link")), null);
      assert.equal(await approvalNeed(call("fs_write", { path: join(workspace, "a.txt") }), join(dir.path, "ws-link")), null);
    } finally {
      await dir.cleanup();
    }
  });
});

/** A channel that answers every question with `answer` (or never, for null), recording the questions; "no-capability" cannot ask. */
function askingRouter(answer: ApprovalAnswer | null | "never" | "no-capability") {
  const asked: { request: ApprovalRequest; signal: AbortSignal }[] = [];
  const router: BubPlugin = { name: "asker" };
  if (answer !== "no-capability") {
    router.askApproval = ({ request, signal }) => {
      asked.push({ request, signal });
      if (answer !== "never") return Promise.resolve(answer);
      return new Promise(() => {});
    };
  }
  return { router, asked };
}

const boundAskers = new WeakMap<BubFramework, () => void>();

/** Makes `router` the framework's running channel (the one before it taken off). */
function bindAsker(framework: BubFramework, router: BubPlugin): void {
  boundAskers.get(framework)?.();
  boundAskers.set(framework, framework.runtime.register(router, "asker"));
}

async function frameworkWith(env: NodeJS.ProcessEnv, home: string, workspace: string): Promise<BubFramework> {
  return createBub({ workspace, home, env: { BUB_HOME: home, ...env }, trustWorkspace: false });
}

/** Runs the framework's beforeToolCall chain for `toolCall` inside a turn of the telegram chat 7, cancelled by `signal`. */
async function beforeToolCall(framework: BubFramework, toolCall: ToolCall, signal = new AbortController().signal) {
  const message = new ChannelMessage({ sessionId: "telegram:7", channel: "telegram", chatId: "7", content: '{"message":"hi","sender_id":"7"}' });
  const hooks = new AgentHooks(framework.runtime, framework.turnContext({ turnId: "turn-test", sessionId: "telegram:7", signal, message }));
  return hooks.beforeToolCall(toolCall, { session_id: "telegram:7" }, signal);
}

describe("links whose target does not exist yet", () => {
  it("are judged by where they point: directly, through a chain, through a linked folder", async () => {
    const dir = await tempDir();
    try {
      const workspace = join(dir.path, "ws");
      const outside = join(dir.path, "outside");
      await mkdir(workspace);
      await mkdir(outside);
      await symlink(join(outside, "new.txt"), join(workspace, "notes.txt"));
      await symlink("hop2", join(workspace, "hop1"));
      await symlink("../outside/chain.txt", join(workspace, "hop2"));
      await symlink(outside, join(workspace, "dirlink"));
      await symlink(join(outside, "later"), join(workspace, "gone"));
      await symlink("inside.txt", join(workspace, "local-link"));
      for (const tool of ["fs_write", "fs.edit"]) {
        assert.deepEqual(await approvalNeed(call(tool, { path: "notes.txt" }), workspace), {
          reason: "writes outside the workspace",
          summary: `${join(workspace, "notes.txt")} (a link to ${join(outside, "new.txt")})`,
        });
        assert.equal((await approvalNeed(call(tool, { path: "hop1" }), workspace))?.summary, `${join(workspace, "hop1")} (a link to ${join(outside, "chain.txt")})`);
        assert.notEqual(await approvalNeed(call(tool, { path: "dirlink/deep.txt" }), workspace), null);
        assert.notEqual(await approvalNeed(call(tool, { path: join(workspace, "gone", "a", "b.txt") }), workspace), null);
        // A dangling link that stays inside is inside.
        assert.equal(await approvalNeed(call(tool, { path: "local-link" }), workspace), null);
      }
    } finally {
      await dir.cleanup();
    }
  });

  it("a link loop cannot be judged: the plugin refuses the call with the resolver's line, asking nobody", async () => {
    const dir = await tempDir();
    try {
      await symlink("loopB", join(dir.path, "loopA"));
      await symlink("loopA", join(dir.path, "loopB"));
      await assert.rejects(approvalNeed(call("fs_write", { path: "loopA" }), dir.path), /too many levels of symbolic links/);
      const framework = await frameworkWith({ BUB_APPROVAL: "ask" }, dir.path, dir.path);
      const { router, asked } = askingRouter({ approved: true });
      bindAsker(framework, router);
      const { decision } = await beforeToolCall(framework, call("fs_write", { path: "loopA", content: "x" }));
      assert.deepEqual(decision, deny(`fs_write: not run: ${join(dir.path, "loopA")}: too many levels of symbolic links (more than 40, a loop?); fix the links or use the file's real path`));
      assert.equal(asked.length, 0);
    } finally {
      await dir.cleanup();
    }
  });
});

describe("the approval plugin", () => {
  it("is registered only with approval: ask; off (the default) asks nothing; a bad value fails at start-up", async () => {
    const dir = await tempDir();
    try {
      const names = async (env: NodeJS.ProcessEnv) => (await frameworkWith(env, dir.path, dir.path)).pluginStatus.map((status) => status.name);
      assert.deepEqual(await names({}), ["builtin"]);
      assert.deepEqual(await names({ BUB_APPROVAL: "off" }), ["builtin"]);
      assert.deepEqual(await names({ BUB_APPROVAL: "ask" }), ["builtin", "approval"]);
      await writeFile(join(dir.path, "config.yml"), "approval: ask\n");
      assert.deepEqual(await names({}), ["builtin", "approval"]);
      assert.deepEqual(await names({ BUB_APPROVAL: "off" }), ["builtin"], "the environment wins over config.yml");
      await assert.rejects(frameworkWith({ BUB_APPROVAL: "yes" }, dir.path, dir.path), /approval/i);

      const { router, asked } = askingRouter({ approved: false });
      const off = await frameworkWith({ BUB_APPROVAL: "off" }, dir.path, dir.path);
      bindAsker(off, router);
      assert.deepEqual((await beforeToolCall(off, call("bash", { cmd: "rm -rf /" }))).decision, proceed());
      assert.equal(asked.length, 0);
    } finally {
      await dir.cleanup();
    }
  });

  it("asks through the router with the turn's message; yes lets the call run, no is a tool error", async () => {
    const dir = await tempDir();
    try {
      const framework = await frameworkWith({ BUB_APPROVAL: "ask" }, dir.path, dir.path);
      const yes = askingRouter({ approved: true, by: "@user7" });
      bindAsker(framework, yes.router);
      assert.deepEqual((await beforeToolCall(framework, call("bash", { cmd: "ls -la" }))).decision, proceed());
      assert.equal(yes.asked.length, 1);
      const request = yes.asked[0]!.request;
      assert.deepEqual([request.tool, request.summary, request.reason, request.sessionId], ["bash", "ls -la", "runs a shell command", "telegram:7"]);
      assert.equal((request.message as ChannelMessage).chatId, "7");
      // A write inside the workspace is not asked about.
      assert.deepEqual((await beforeToolCall(framework, call("fs_write", { path: "a.txt", content: "x" }))).decision, proceed());
      assert.equal(yes.asked.length, 1);

      const no = askingRouter({ approved: false, by: "@user7" });
      bindAsker(framework, no.router);
      assert.deepEqual((await beforeToolCall(framework, call("fs_write", { path: "/etc/motd", content: "x" }))).decision, deny(approvalErrors.denied("fs_write")));
      assert.equal(approvalErrors.denied("bash"), "bash: the user denied this call");
    } finally {
      await dir.cleanup();
    }
  });

  it("denies, saying how to allow it, when nobody can be asked; denies on timeout", async () => {
    const dir = await tempDir();
    try {
      const framework = await frameworkWith({ BUB_APPROVAL: "ask", BUB_APPROVAL_TIMEOUT_SECONDS: "0.05" }, dir.path, dir.path);
      bindAsker(framework, askingRouter("no-capability").router);
      const { decision } = await beforeToolCall(framework, call("bash", { cmd: "ls" }));
      assert.equal(decision.action, "deny");
      assert.match((decision as { message: string }).message, /^bash: not run: .*nobody can be asked here.*BUB_APPROVAL=off/);

      bindAsker(framework, askingRouter({ approved: false, unavailable: "the chat's input is not a terminal" }).router);
      const piped = (await beforeToolCall(framework, call("bash", { cmd: "ls" }))).decision as { message: string };
      assert.match(piped.message, /nobody can be asked here \(the chat's input is not a terminal\); set BUB_APPROVAL=off/);

      const never = askingRouter("never");
      bindAsker(framework, never.router);
      const started = Date.now();
      assert.deepEqual((await beforeToolCall(framework, call("bash", { cmd: "ls" }))).decision, deny(approvalErrors.timeout("bash", 0.05)));
      assert.ok(Date.now() - started < 2000);
      assert.equal(never.asked[0]!.signal.aborted, true, "the channel is told to take its question back");

      // Outside a turn (no channel manager, no `bub run`) there is nobody either.
      const signal = new AbortController().signal;
      const hooks = new AgentHooks(framework.runtime, framework.turnContext({ turnId: "turn-test", sessionId: "telegram:7", signal }));
      assert.equal((await hooks.beforeToolCall(call("bash", { cmd: "ls" }), {}, signal)).decision.action, "deny");
    } finally {
      await dir.cleanup();
    }
  });

  it("stops asking and denies when the turn's signal (the hook argument) aborts", async () => {
    const dir = await tempDir();
    try {
      const framework = await frameworkWith({ BUB_APPROVAL: "ask", BUB_APPROVAL_TIMEOUT_SECONDS: "60" }, dir.path, dir.path);
      const never = askingRouter("never");
      bindAsker(framework, never.router);
      const turn = new AbortController();
      const answer = beforeToolCall(framework, call("bash", { cmd: "ls" }), turn.signal);
      while (never.asked.length === 0) await new Promise((resolve) => setImmediate(resolve));
      turn.abort(new Error("turn cancelled"));
      assert.deepEqual((await answer).decision, deny(approvalErrors.cancelled("bash")));
      assert.equal(never.asked[0]!.signal.aborted, true, "the channel is told to take its question back");
    } finally {
      await dir.cleanup();
    }
  });

  it("a plugin registered later decides first: its own verdict replaces the question", async () => {
    const dir = await tempDir();
    try {
      const framework = await frameworkWith({ BUB_APPROVAL: "ask" }, dir.path, dir.path);
      const { router, asked } = askingRouter({ approved: false });
      bindAsker(framework, router);
      await framework.registerPlugin({ name: "allow-ls", beforeToolCall: ({ call: toolCall }) => (toolCall.arguments.cmd === "ls" ? replace("a.txt") : null) });
      assert.deepEqual((await beforeToolCall(framework, call("bash", { cmd: "ls" }))).decision, replace("a.txt"));
      assert.equal(asked.length, 0);
      assert.equal((await beforeToolCall(framework, call("bash", { cmd: "rm x" }))).decision.action, "deny");
      assert.equal(asked.length, 1);
    } finally {
      await dir.cleanup();
    }
  });
});
