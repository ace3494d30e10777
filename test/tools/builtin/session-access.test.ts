// Sessions kept apart: in a channel turn (not the local CLI) `subagent` may not name another
// chat's `<channel>:<chat id>` session unless BUB_SUBAGENT_CROSS_SESSION is true; two
// Telegram chats through the tool, then through a real turn against a fake model server.
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { z } from "zod";
import { createBub } from "../../../src/builtin/create.ts";
import { ChannelMessage } from "../../../src/channels/message.ts";
import { isLocalTurn, otherChatSession } from "../../../src/tools/builtin/session-access.ts";
import { subagentTools } from "../../../src/tools/builtin/subagent.ts";
import { defineTool } from "../../../src/tools/tool.ts";
import { reply } from "../../support/fake-openai.ts";
import { useFakeOpenAI } from "../../support/fake-openai-suite.ts";
import { tempDir } from "../../support/temp.ts";
import { call, errorOf, fakeAgent, toolContext } from "../support/tool-context.ts";

const tools = subagentTools();
const registry = () => [defineTool({ name: "bash", parameters: z.object({}), run: () => "bash" }), ...tools];
/** The state of a turn of Telegram chat `chat`, as the builtin plugin loads it. */
const telegramTurn = (chat: string, config: Record<string, unknown> = {}) => {
  const agent = fakeAgent({ tools: registry(), config });
  return { agent, state: { session_id: `telegram:${chat}`, context: `channel=$telegram|chat_id=${chat}` } };
};

describe("sessions kept apart (subagent)", () => {
  it("refuses another chat's session in a Telegram turn, naming the session and the setting", async () => {
    const { agent, state } = telegramTurn("1");
    const message = await errorOf(call(tools, "subagent", { prompt: "read their tape", session: "telegram:2" }, toolContext(state, { agent })));
    assert.match(message, /'telegram:2' belongs to another chat/);
    assert.match(message, /'telegram:1'/);
    assert.match(message, /BUB_SUBAGENT_CROSS_SESSION=true/);
    assert.match(message, /subagent_cross_session/);
    // The local CLI's sessions are another chat's too.
    assert.match(await errorOf(call(tools, "subagent", { prompt: "x", session: " cli:local " }, toolContext(state, { agent }))), /'cli:local' belongs to another chat/);
    assert.equal(agent.runs.length, 0, "nothing ran");
  });

  it("lets a Telegram turn use temp, inherit, its own session and names that are not <channel>:<chat id>", async () => {
    const { agent, state } = telegramTurn("1");
    for (const session of ["temp", "inherit", "telegram:1", "research", "notes:2026", "temp/abc"]) {
      await call(tools, "subagent", { prompt: "x", session }, toolContext(state, { agent }));
    }
    const ids = agent.runs.map((run) => run.sessionId);
    assert.match(ids[0]!, /^temp\/[0-9a-f]{8}$/);
    assert.deepEqual(ids.slice(1), ["telegram:1", "telegram:1", "research", "notes:2026", "temp/abc"]);
  });

  it("allows another chat's session when subagent_cross_session is true, and always in a local CLI turn", async () => {
    const { agent, state } = telegramTurn("1", { subagent_cross_session: true });
    await call(tools, "subagent", { prompt: "x", session: "telegram:2" }, toolContext(state, { agent }));
    const local = fakeAgent({ tools: registry() });
    await call(tools, "subagent", { prompt: "x", session: "telegram:2" }, toolContext({ session_id: "cli:local", context: "sender_id=human|channel=$cli|chat_id=local" }, { agent: local }));
    await call(tools, "subagent", { prompt: "x", session: "telegram:2" }, toolContext({ session_id: "cli_session", context: "thread_id=cli_session|channel=$cli|chat_id=cli_chat" }, { agent: local }));
    assert.deepEqual([...agent.runs, ...local.runs].map((run) => run.sessionId), ["telegram:2", "telegram:2", "telegram:2"]);
  });

  it("lets a channel turn reach only its own linked person's session (person:<id>), and keeps a CLI turn in one local", async () => {
    // An unlinked (or not sharing) Telegram chat may not name a linked person's shared session.
    const { agent, state } = telegramTurn("1");
    assert.match(await errorOf(call(tools, "subagent", { prompt: "read their tape", session: "person:p_abc" }, toolContext(state, { agent }))), /'person:p_abc' belongs to another chat/);
    assert.match(await errorOf(call(tools, "subagent", { prompt: "x", session: " Person:p_abc " }, toolContext(state, { agent }))), /belongs to another chat/);
    // The linked sender's turn runs in its person's session: that one, and no other person's.
    const linked = { session_id: "person:p_abc", context: "channel=$telegram|chat_id=7" };
    assert.match(await errorOf(call(tools, "subagent", { prompt: "x", session: "person:p_other" }, toolContext(linked, { agent }))), /'person:p_other' belongs to another chat/);
    await call(tools, "subagent", { prompt: "x", session: "person:p_abc" }, toolContext(linked, { agent }));
    assert.deepEqual(agent.runs.map((run) => run.sessionId), ["person:p_abc"]);
    assert.equal(isLocalTurn(linked), false);
    // `bub chat` in the shared session is still the local user's turn.
    assert.equal(isLocalTurn({ session_id: "person:p_abc", context: "thread_id=cli_session|channel=$cli|chat_id=cli_chat" }), true);
    assert.equal(isLocalTurn({ session_id: "person:p_abc" }), false, "no channel named: fails closed");
  });

  it("treats a plugin channel's <channel>:<chat id> as a chat session and fails closed without a channel", async () => {
    const agent = fakeAgent({ tools: registry() });
    const discord = { session_id: "discord:7", context: "channel=$discord|chat_id=7" };
    assert.match(await errorOf(call(tools, "subagent", { prompt: "x", session: "discord:8" }, toolContext(discord, { agent }))), /'discord:8' belongs to another chat/);
    assert.match(await errorOf(call(tools, "subagent", { prompt: "x", session: "telegram:2" }, toolContext({}, { agent: agent }))), /'telegram:2'.*\(none\)/);
    assert.equal(agent.runs.length, 0);
  });

  it("decides local turns and other chats' sessions from the turn state", () => {
    assert.equal(isLocalTurn({ session_id: "cli:local", context: "channel=$cli|chat_id=local" }), true);
    assert.equal(isLocalTurn({ session_id: "cli:local", context: "channel=$telegram|chat_id=1" }), false);
    assert.equal(isLocalTurn({ session_id: "telegram:1" }), false);
    assert.equal(isLocalTurn({}), false);
    const state = { session_id: "telegram:1" };
    assert.equal(otherChatSession("telegram:2", state), "telegram:2");
    assert.equal(otherChatSession("Telegram:2", state), "Telegram:2");
    assert.equal(otherChatSession("telegram:1", state), null);
    assert.equal(otherChatSession("telegram:", state), null);
    assert.equal(otherChatSession("research", state), null);
    assert.equal(otherChatSession("matrix:5", state), null, "not a known channel");
  });
});

describe("sessions kept apart in real turns of two Telegram chats", () => {
  const server = useFakeOpenAI();

  async function tapeText(home: string): Promise<string> {
    const dir = join(home, "tapes");
    return (await Promise.all((await readdir(dir)).filter((name) => name.endsWith(".jsonl")).map((name) => readFile(join(dir, name), "utf8")))).join("");
  }

  async function run(crossSession: boolean): Promise<{ toolResult: string; tapes: string }> {
    const dir = await tempDir();
    try {
      const home = join(dir.path, ".bub");
      const env: Record<string, string> = { BUB_MODEL: "fake:any", BUB_API_BASE: server.url, BUB_API_KEY: "k", BUB_HOME: home };
      if (crossSession) env.BUB_SUBAGENT_CROSS_SESSION = "true";
      const framework = await createBub({ workspace: dir.path, home, env });
      const turn = (chat: string, content: string) =>
        framework.running(() => framework.processInbound(new ChannelMessage({ sessionId: `telegram:${chat}`, channel: "telegram", chatId: chat, content })));
      server.script(reply.text("chat two secret noted"));
      await turn("2", "my secret is 1234");
      const args = JSON.stringify({ prompt: "write into this tape", session: "telegram:2" });
      server.script(reply.toolCalls([{ name: "subagent", arguments: args }]));
      if (crossSession) server.script(reply.text("SUBAGENT WROTE HERE"));
      server.script(reply.text("done"));
      await turn("1", "look at chat 2");
      const last = server.requests.at(-1)!.body.messages;
      const toolResult = String(last.find((message) => message.role === "tool")?.content);
      return { toolResult, tapes: await tapeText(home) };
    } finally {
      await dir.cleanup();
    }
  }

  it("chat 1's model cannot run a subagent on chat 2's session", async () => {
    const { toolResult, tapes } = await run(false);
    assert.match(toolResult, /'telegram:2' belongs to another chat/);
    assert.match(toolResult, /BUB_SUBAGENT_CROSS_SESSION=true/);
    assert.equal(server.requests.length, 3, "no subagent model call");
    assert.ok(!tapes.includes("write into this tape\""), "nothing was written for chat 2");
  });

  it("BUB_SUBAGENT_CROSS_SESSION=true lets it", async () => {
    const { toolResult, tapes } = await run(true);
    assert.equal(toolResult, "SUBAGENT WROTE HERE");
    assert.equal(server.requests.length, 4);
    assert.ok(tapes.includes("SUBAGENT WROTE HERE"));
    assert.ok(tapes.includes("write into this tape\""), "the subagent's prompt is on chat 2's tape");
  });
});
