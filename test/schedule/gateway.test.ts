// A scheduled turn end to end: `bub gateway` serving Telegram against the fake Bot API, the
// model behind the fake OpenAI server. The model schedules a turn 1.5 s ahead; the scheduled
// turn runs in the same session and its answer arrives in the same chat.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { startSourceGateway } from "../support/source-gateway.ts";
import { tempDir } from "../support/temp.ts";
import { startFakeTelegram } from "../support/fake-telegram.ts";
import { reply, startFakeOpenAI } from "../support/fake-openai.ts";

const CHAT = 7;

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

describe("scheduled turns in bub gateway", () => {
  it("answers a turn the model scheduled in the chat it was scheduled from", async () => {
    const telegram = await startFakeTelegram({ token: "123:TEST" });
    const openai = await startFakeOpenAI();
    const dir = await tempDir();
    const bubHome = join(dir.path, ".bub");
    openai.script(
      reply.toolCalls([{ id: "call-1", name: "schedule_add", arguments: JSON.stringify({ prompt: "Remind me to stretch.", delay_seconds: 1.5 }) }]),
      reply.text("I will remind you in a moment."),
      reply.text("Time to stretch!"),
    );
    const gateway = startSourceGateway(dir.path, telegram, { BUB_MODEL: "local:any", BUB_API_BASE: openai.url, BUB_TELEGRAM_ALLOW_USERS: String(CHAT) });
    try {
      await within(telegram.waitForCalls("deleteWebhook", 1), 15_000, "the bot to poll");
      telegram.sendText({ chatId: CHAT, userId: CHAT, text: "remind me to stretch in a second or two" });
      const [first] = await within(telegram.waitForCalls("sendMessage", 1), 15_000, "the first answer");
      assert.equal(first!.payload.text, "I will remind you in a moment.");
      const toolResult = openai.requests[1]!.body.messages.find((message) => message.role === "tool");
      assert.match(String(toolResult?.content), /scheduled sch-[0-9a-f]{8}: once at \S+, next \S+, to session telegram:7/);
      const sentAt = Date.now();
      const [, second] = await within(telegram.waitForCalls("sendMessage", 2), 15_000, `the scheduled answer\n${gateway.stderr()}`);
      assert.equal(String(second!.payload.chat_id), String(CHAT));
      assert.equal(second!.payload.text, "Time to stretch!");
      assert.ok(Date.now() - sentAt < 5_000);
      const prompt = openai.requests[2]!.body.messages.filter((message) => message.role === "user").at(-1);
      assert.match(String(prompt?.content), /^channel=\$telegram\|chat_id=7\|schedule_id=sch-[0-9a-f]{8}\|scheduled_for=\S+Z\n---Date: .*---\nRemind me to stretch\.$/);
      const history = openai.requests[2]!.body.messages.map((message) => message.content);
      assert.ok(history.includes("I will remind you in a moment."), "the scheduled turn runs in the chat's session");
      assert.deepEqual(await readdir(join(bubHome, "schedules", "jobs")), [], "the one-shot job is gone after its run");
      gateway.child.kill("SIGTERM");
      assert.equal(await gateway.exited, 0, gateway.stderr());
    } finally {
      gateway.kill();
      await telegram.close();
      await openai.close();
      await dir.cleanup();
    }
  });
});
