import assert from "node:assert/strict";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { reply } from "../support/fake-openai.ts";
import { useFakeOpenAI } from "../support/fake-openai-suite.ts";
import { messageText, startAcpEditor } from "../support/acp-editor.ts";
import { tempDir } from "../support/temp.ts";

const bin = fileURLToPath(new URL("../../src/bin/bub.ts", import.meta.url));

async function tapeText(home: string): Promise<string> {
  const dir = join(home, "tapes");
  const files = (await readdir(dir)).filter((name) => name.endsWith(".jsonl"));
  return (await Promise.all(files.map((name) => readFile(join(dir, name), "utf8")))).join("");
}

describe("bub acp with the SDK's client as the editor", () => {
  const model = useFakeOpenAI();
  let dir: { path: string; cleanup: () => Promise<void> };
  let home: string;
  let workspace: string;

  before(async () => {
    dir = await tempDir();
    home = join(dir.path, "home");
    workspace = join(dir.path, "ws");
    await mkdir(workspace, { recursive: true });
    await writeFile(join(workspace, "notes.txt"), "remember the milk\n");
  });
  after(() => dir.cleanup());

  function start(extra: Record<string, string> = {}): ReturnType<typeof startAcpEditor> {
    const env = { PATH: process.env.PATH, HOME: dir.path, BUB_HOME: home, BUB_MODEL: "fake:any", BUB_API_BASE: model.url, BUB_API_KEY: "sk-acp-test", ...extra };
    return startAcpEditor(process.execPath, [bin, "acp"], { env, cwd: workspace });
  }

  it("maps a session to a tape, prompts to turns, and streams text and tool calls as session updates", async () => {
    const editor = await start();
    try {
      assert.equal(editor.initialized.agentInfo?.name, "bub");
      const { sessionId } = await editor.agent.request("session/new", { cwd: workspace, mcpServers: [] });
      assert.match(sessionId, /^acp:[0-9a-f-]{36}$/);

      model.script(reply.toolCalls([{ id: "call_read", name: "fs_read", arguments: '{"path":"notes.txt"}' }]), reply.text("You need milk."));
      const first = await editor.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "what do I need?" }] });
      assert.equal(first.stopReason, "end_turn");
      assert.equal(messageText(editor, sessionId), "You need milk.");
      const call = editor.updates.find((item) => item.update.sessionUpdate === "tool_call")!.update as { toolCallId: string; title: string; kind: string; status: string; locations: { path: string }[] };
      assert.deepEqual([call.toolCallId, call.title, call.kind, call.status], ["call_read", "fs.read notes.txt", "read", "in_progress"]);
      assert.deepEqual(call.locations, [{ path: join(workspace, "notes.txt") }]);
      const result = editor.updates.find((item) => item.update.sessionUpdate === "tool_call_update")!.update as { toolCallId: string; status: string; content: { content: { text: string } }[] };
      assert.equal(result.toolCallId, "call_read");
      assert.equal(result.status, "completed");
      assert.equal(result.content[0]!.content.text, "remember the milk");

      model.script(reply.text("Still milk."));
      await editor.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "and again?" }] });
      const history = model.requests[2]!.body.messages.map((message) => String(message.content ?? ""));
      assert.ok(history.some((text) => text.includes("what do I need?")), "the second turn continues the session's tape");
      assert.match(await tapeText(home), /and again\?/);

      const other = await editor.agent.request("session/new", { cwd: workspace, mcpServers: [] });
      model.script(reply.text("Fresh."));
      await editor.agent.request("session/prompt", { sessionId: other.sessionId, prompt: [{ type: "text", text: "new session" }] });
      assert.ok(!model.requests[3]!.body.messages.some((message) => String(message.content ?? "").includes("what do I need?")), "another session has its own tape");
      model.script(reply.error(400, "the model refused this request"));
      await assert.rejects(editor.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "fail" }] }), /the model refused this request/);
    } finally {
      assert.equal(await editor.close(), 0);
      assert.equal(editor.stderr(), "", "bub acp writes nothing but the protocol, and logs to its file");
    }
  });

  it("runs a session whose cwd is another folder in that folder", async () => {
    const elsewhere = join(dir.path, "elsewhere");
    await mkdir(elsewhere, { recursive: true });
    await writeFile(join(elsewhere, "notes.txt"), "notes of the other folder\n");
    const editor = await start();
    try {
      const { sessionId } = await editor.agent.request("session/new", { cwd: elsewhere, mcpServers: [] });
      model.script(reply.toolCalls([{ id: "call_other", name: "fs_read", arguments: '{"path":"notes.txt"}' }]), reply.text("read"));
      await editor.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "read my notes" }] });
      const call = editor.updates.find((item) => item.update.sessionUpdate === "tool_call")!.update as { locations: { path: string }[] };
      assert.deepEqual(call.locations, [{ path: join(elsewhere, "notes.txt") }]);
      assert.equal(String(model.requests[1]!.body.messages.find((message) => message.role === "tool")!.content), "notes of the other folder");
    } finally {
      assert.equal(await editor.close(), 0);
    }
  });

  it("cancels a running turn on session/cancel and answers with stopReason cancelled", async () => {
    const editor = await start();
    try {
      const { sessionId } = await editor.agent.request("session/new", { cwd: workspace, mcpServers: [] });
      model.script(reply.hang());
      const prompt = editor.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "take forever" }] });
      while (model.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      await editor.agent.notify("session/cancel", { sessionId });
      assert.equal((await prompt).stopReason, "cancelled");
      assert.match(await tapeText(home), /"interrupted"/);
    } finally {
      assert.equal(await editor.close(), 0);
    }
  });

  it("turns approval questions (BUB_APPROVAL=ask) into permission requests for the same tool call", async () => {
    const editor = await start({ BUB_APPROVAL: "ask" });
    try {
      const { sessionId } = await editor.agent.request("session/new", { cwd: workspace, mcpServers: [] });
      model.script(reply.toolCalls([{ id: "call_yes", name: "bash", arguments: '{"cmd":"echo approved-run"}' }]), reply.text("ran it"));
      await editor.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "run it" }] });
      assert.equal(editor.permissionRequests.length, 1);
      const asked = editor.permissionRequests[0]!;
      assert.equal(asked.toolCall.toolCallId, "call_yes");
      assert.match(String(asked.toolCall.title), /^echo approved-run \(runs a shell command\)$/);
      assert.deepEqual(asked.options.map((option) => option.kind), ["allow_once", "reject_once"]);
      assert.match(String(model.requests[1]!.body.messages.find((message) => message.role === "tool")!.content), /approved-run/);

      editor.answer = () => ({ outcome: { outcome: "selected", optionId: "reject" } });
      model.script(reply.toolCalls([{ id: "call_no", name: "bash", arguments: '{"cmd":"echo never-run"}' }]), reply.text("ok, not run"));
      await editor.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "run the other" }] });
      const denied = String(model.requests[3]!.body.messages.filter((message) => message.role === "tool").at(-1)!.content);
      assert.match(denied, /the user denied this call/);
      const update = editor.updates.filter((item) => item.update.sessionUpdate === "tool_call_update").at(-1)!.update as { toolCallId: string; status: string };
      assert.deepEqual([update.toolCallId, update.status], ["call_no", "failed"]);
    } finally {
      assert.equal(await editor.close(), 0);
    }
  });
});

