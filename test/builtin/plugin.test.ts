import { toEnvelope } from "../../src/kernel/envelope.ts";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createBub } from "../../src/builtin/create.ts";
import { ChannelMessage } from "../../src/channels/message.ts";
import { DEFAULT_SYSTEM_PROMPT } from "../../src/builtin/system-prompt.ts";
import { captureLogs, tempDir } from "../support/temp.ts";
import type { BubFramework } from "../../src/kernel/framework.ts";

async function builtinOnly(workspace = "/tmp"): Promise<BubFramework> {
  const bub = await createBub({ workspace, home: "/nonexistent-bub-home", env: {} });
  return bub;
}

describe("builtin plugin (kernel-level hooks)", () => {
  it("provides the Telegram channel and a steering inbox keyed by target; the agent's hooks only with the agent", async () => {
    const bub = await createBub({ workspace: "/tmp", home: "/nonexistent-bub-home", env: {}, agent: false });
    const channels = bub.runtime.callSync("provideChannels", { messageHandler: async () => undefined });
    assert.deepEqual([...channels.keys()], ["telegram"]);
    const inbox = bub.runtime.callSync("provideSteeringInbox", {});
    assert.ok(inbox && "enqueueMessage" in inbox);
    inbox.enqueueMessage(toEnvelope("more"), { sessionId: "t:1" });
    assert.equal(inbox.messageCount({ sessionId: "t:1" }), 1);
    assert.equal(inbox.messageCount({ sessionId: "t:1", threadId: "x" }), 0);
    const turn = { sessionId: "t:1", isRunning: false, runningCount: 0, pendingCount: 0, steeringCount: 0 };
    assert.equal(await bub.admitMessage("t:1", toEnvelope("hi"), turn), null, "admission defaults are the channel manager's");
    assert.equal(bub.hookReport().runModelStream, undefined, "no agent: no model hook");
    assert.deepEqual((await builtinOnly()).hookReport().runModelStream, ["builtin"], "the agent answers as the builtin plugin itself");
  });

  it("resolves the session from session_id (unstripped) or channel:chat_id", async () => {
    const bub = await builtinOnly();
    assert.equal(await bub.resolveSession(toEnvelope({ session_id: " s1 " })), " s1 ");
    assert.equal(await bub.resolveSession(toEnvelope({ session_id: "  ", channel: "telegram", chat_id: "42" })), "telegram:42");
    assert.equal(await bub.resolveSession(new ChannelMessage({ sessionId: "", channel: "cli", chatId: "local", content: "" })), "cli:local");
  });

  it("renders one ChannelMessage carrying the inbound's channel, chat, output channel and kind", async () => {
    const bub = await builtinOnly();
    bub.runtime.register({ runModel: () => "answer" }, "model");
    const result = await bub.processInbound({ channel: "telegram", chat_id: "9", output_channel: "telegram", kind: "command", content: "q" });
    assert.equal(result.outbounds.length, 1);
    const outbound = result.outbounds[0] as ChannelMessage;
    assert.ok(outbound instanceof ChannelMessage);
    assert.deepEqual(
      { session: outbound.sessionId, channel: outbound.channel, chat: outbound.chatId, content: outbound.content, output: outbound.outputChannel, kind: outbound.kind },
      { session: "telegram:9", channel: "telegram", chat: "9", content: "answer", output: "telegram", kind: "command" },
    );
    assert.deepEqual(outbound.context, { channel: "$telegram", chat_id: "9" });
  });

  it("sends the reply back to the inbound's channel when the inbound names no output channel", async () => {
    const bub = await builtinOnly();
    bub.runtime.register({ runModel: () => "answer" }, "model");
    const result = await bub.processInbound({ channel: "webhook", chat_id: "hook", content: "q" });
    const outbound = result.outbounds[0] as ChannelMessage;
    assert.equal(outbound.outputChannel, "webhook");
    assert.equal(outbound.channel, "webhook");
  });

  it("leaves delivery to the running channel: its dispatchOutbound gets the outbounds", async () => {
    const bub = await builtinOnly();
    bub.runtime.register({ runModel: () => "answer" }, "model");
    const sent: unknown[] = [];
    bub.runtime.register({ name: "channel", dispatchOutbound: ({ message: m }) => (sent.push(m), true) }, "channel");
    await bub.processInbound({ channel: "cli", chat_id: "local", output_channel: "cli", content: "q" });
    assert.equal((sent[0] as ChannelMessage).content, "answer");
  });

  it("turns a failure into an error outbound on the inbound's channel", async () => {
    const bub = await builtinOnly();
    bub.runtime.register({ runModel: () => { throw new Error("provider exploded"); } }, "model");
    const sent: ChannelMessage[] = [];
    bub.runtime.register({ name: "channel", dispatchOutbound: ({ message: m }) => (sent.push(m as ChannelMessage), true) }, "channel");
    await captureLogs(() => assert.rejects(bub.processInbound({ session_id: "s", channel: "telegram", chat_id: "3", content: "q" }), /provider exploded/));
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.kind, "error");
    assert.equal(sent[0]!.outputChannel, "telegram");
    assert.equal(sent[0]!.content, "An error occurred at stage 'turn': [unknown] plugin 'model' failed in runModel: provider exploded — fix the plugin or take it out (`bub hooks` shows where each plugin comes from)");
  });

  it("builds the system prompt from the default prompt and the workspace's AGENTS.md", async () => {
    const dir = await tempDir();
    try {
      const bub = await builtinOnly(dir.path);
      assert.equal(bub.runtime.callSync("systemPrompt", { prompt: "", state: {} }), DEFAULT_SYSTEM_PROMPT);
      // A workspace's AGENTS.md is held between turns (a turn's loadState reads it again after a second).
      const other = join(dir.path, "other");
      await mkdir(other);
      await writeFile(join(other, "AGENTS.md"), "\n  Always answer in French.  \n");
      bub.runtime.register({ systemPrompt: () => "plugin fragment" }, "extra");
      bub.workspace = other;
      assert.equal(bub.runtime.callSync("systemPrompt", { prompt: "", state: {} }), `${DEFAULT_SYSTEM_PROMPT}\n\nAlways answer in French.\n\nplugin fragment`);
    } finally {
      await dir.cleanup();
    }
  });
});

describe("ChannelMessage", () => {
  it("stamps channel and chat into its context and renders the context string", () => {
    const message = new ChannelMessage({ sessionId: "s", channel: "cli", chatId: "local", content: "x", context: { thread_id: "t", _hidden: 1, channel: "old" } });
    assert.equal(message.contextStr, "thread_id=t|channel=$cli|chat_id=local");
    assert.equal(message.outputChannel, "cli");
  });

  it("joins a batch into the last message with all media", () => {
    const media = { type: "image" as const, mimeType: "image/png", url: "u" };
    const first = new ChannelMessage({ sessionId: "s", channel: "tg", content: "a", media: [media] });
    const last = new ChannelMessage({ sessionId: "s", channel: "tg", content: "b", chatId: "2" });
    const joined = ChannelMessage.fromBatch([first, last]);
    assert.equal(joined.content, "a\nb");
    assert.equal(joined.chatId, "2");
    assert.deepEqual(joined.media, [media]);
    assert.throws(() => ChannelMessage.fromBatch([]), /Batch cannot be empty/);
  });
});
