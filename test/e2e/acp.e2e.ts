/**
 * `bub acp` from the installed package, driven by the ACP SDK's client side as the editor:
 * a session whose prompts are turns (streamed text, a tool call and its result as session
 * updates), a cancelled turn, and a bash call held for the editor's permission
 * (BUB_APPROVAL=ask).
 */
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { messageText, startAcpEditor } from "../support/acp-editor.ts";
import { cleanEnv, installedPackage, tempHome } from "./support/installed.ts";

describe("bub acp (installed package)", () => {
  let model: FakeOpenAI;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let workspace: string;

  before(async () => {
    await installedPackage();
    model = await startFakeOpenAI();
    home = await tempHome();
    workspace = join(home.path, "project");
    await mkdir(workspace);
    await writeFile(join(workspace, "todo.txt"), "ship the ACP agent\n");
  });
  after(() => Promise.all([model.close(), home.cleanup()]));

  async function editor(extra: Record<string, string> = {}) {
    const { bin } = await installedPackage();
    const env = cleanEnv(home.path, { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "local:any", BUB_API_BASE: model.url, BUB_API_KEY: "sk-e2e", ...extra });
    return startAcpEditor(bin, ["acp"], { env, cwd: workspace });
  }

  it("runs prompts as turns with streamed text and tool calls, and cancels on session/cancel", async () => {
    const acp = await editor();
    try {
      assert.equal(acp.initialized.agentInfo?.name, "bub");
      const { sessionId } = await acp.agent.request("session/new", { cwd: workspace, mcpServers: [] });
      model.script(reply.toolCalls([{ id: "call_todo", name: "fs_read", arguments: '{"path":"todo.txt"}' }]), reply.text("Ship the ACP agent."));
      const done = await acp.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "what is on my list?" }] });
      assert.equal(done.stopReason, "end_turn");
      assert.equal(messageText(acp, sessionId), "Ship the ACP agent.");
      const kinds = acp.updates.map((item) => item.update.sessionUpdate);
      assert.deepEqual(kinds.filter((kind) => kind.startsWith("tool_call")), ["tool_call", "tool_call_update"]);
      const result = acp.updates.find((item) => item.update.sessionUpdate === "tool_call_update")!.update as { status: string; content: { content: { text: string } }[] };
      assert.equal(result.status, "completed");
      assert.equal(result.content[0]!.content.text, "ship the ACP agent");

      model.script(reply.hang());
      const before = model.requests.length;
      const prompt = acp.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "think for a long time" }] });
      while (model.requests.length === before) await new Promise((resolve) => setTimeout(resolve, 10));
      await acp.agent.notify("session/cancel", { sessionId });
      assert.equal((await prompt).stopReason, "cancelled");
    } finally {
      assert.equal(await acp.close(), 0, acp.stderr());
    }
  });

  it("offers the session's models as the `model` config option and switches it with session/set_config_option", async () => {
    const acp = await editor({ BUB_FALLBACK_MODELS: "local:backup" });
    try {
      const created = await acp.agent.request("session/new", { cwd: workspace, mcpServers: [] });
      const [option] = created.configOptions ?? [];
      assert.equal(option?.id, "model");
      assert.ok(option?.type === "select");
      assert.equal(option.currentValue, "local:any");
      assert.deepEqual(option.options.map((choice) => ("value" in choice ? choice.value : null)), ["local:any", "local:backup"]);
      const changed = await acp.agent.request("session/set_config_option", { sessionId: created.sessionId, configId: "model", value: "local:backup" });
      assert.ok(changed.configOptions[0]?.type === "select");
      assert.equal(changed.configOptions[0].currentValue, "local:backup");
      model.script(reply.text("From the backup."));
      await acp.agent.request("session/prompt", { sessionId: created.sessionId, prompt: [{ type: "text", text: "hi" }] });
      assert.equal(model.requests.at(-1)!.body.model, "backup");
      await assert.rejects(acp.agent.request("session/set_config_option", { sessionId: created.sessionId, configId: "model", value: "nonsense" }), /provider:model|nonsense/);
    } finally {
      assert.equal(await acp.close(), 0, acp.stderr());
    }
  });

  it("asks the editor before a bash call when BUB_APPROVAL=ask, and runs it only when allowed", async () => {
    const acp = await editor({ BUB_APPROVAL: "ask" });
    try {
      const { sessionId } = await acp.agent.request("session/new", { cwd: workspace, mcpServers: [] });
      acp.answer = () => ({ outcome: { outcome: "selected", optionId: "reject" } });
      model.script(reply.toolCalls([{ id: "call_rm", name: "bash", arguments: '{"cmd":"rm todo.txt"}' }]), reply.text("I did not remove it."));
      await acp.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "remove the list" }] });
      assert.equal(acp.permissionRequests.length, 1);
      assert.equal(acp.permissionRequests[0]!.toolCall.toolCallId, "call_rm");
      const tool = model.requests.at(-1)!.body.messages.filter((message) => message.role === "tool").at(-1)!;
      assert.match(String(tool.content), /the user denied this call/);
      assert.equal(messageText(acp, sessionId), "I did not remove it.");
    } finally {
      assert.equal(await acp.close(), 0, acp.stderr());
    }
  });
});
