/**
 * BUB_APPROVAL=ask with two `bub gateway` processes (from the sources) on one PostgreSQL:
 * the Approve button is posted by the process running the turn, the press reaches the
 * elected poller, and the poller passes it on, so the turn goes on whichever process runs it.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { reply } from "../support/fake-openai.ts";
import { useFakeOpenAI } from "../support/fake-openai-suite.ts";
import { startFakeTelegram } from "../support/fake-telegram.ts";
import { usePostgres } from "../support/postgres.ts";
import { startSourceGateway, type SourceGateway } from "../support/source-gateway.ts";
import { tempDir } from "../support/temp.ts";
import { eventually } from "../support/eventually.ts";

const postgres = usePostgres();

describe("approval with several gateway processes", () => {
  const model = useFakeOpenAI();

  it("an Approve press reaches the process that asked, for turns run by either process", { timeout: 120_000 }, async (t) => {
    const url = await (await postgres()).createDatabase();
    const telegram = await startFakeTelegram({ token: "123:TEST" });
    const workspace = await tempDir();
    const homes = [await tempDir(), await tempDir()];
    const env = {
      BUB_MODEL: "fake:any",
      BUB_API_BASE: model.url,
      BUB_API_KEY: "sk-test",
      BUB_TAPE_STORE: "postgres",
      BUB_DATABASE_URL: url,
      BUB_APPROVAL: "ask",
      BUB_TELEGRAM_ALLOW_USERS: "7,8,9,10",
      BUB_TELEGRAM_POLLER_RETRY_SECONDS: "1",
      BUB_LOG_LEVEL: "info",
    };
    const gateways: SourceGateway[] = homes.map((home) => startSourceGateway(workspace.path, telegram, { ...env, BUB_HOME: join(home.path, ".bub") }));
    try {
      await eventually(() => (gateways.every((gateway) => gateway.stderr().includes("telegram.queue serving bot")) && gateways.some((gateway) => gateway.stderr().includes("telegram.poller elected")) ? true : undefined), "both gateways on the queue, one polling", 60_000);
      // One chat after another, so that the turns land on either process.
      for (const chat of [7, 8, 9, 10]) {
        model.script(reply.toolCalls([{ name: "bash", arguments: JSON.stringify({ cmd: `touch made-${chat}.txt && echo ran` }) }]), reply.text(`Made file ${chat}.`));
        telegram.sendText({ chatId: chat, userId: chat, text: "make a file" });
        const asked = await eventually(() => telegram.callsOf("sendMessage").find((call) => call.status === 200 && call.payload.chat_id === String(chat) && call.payload.reply_markup !== undefined), `the question in chat ${chat}`, 30_000);
        const approve = telegram.buttonsOf(asked)[0]?.data ?? "";
        const query = telegram.pressButton({ message: asked, data: approve, from: { id: chat, username: `user${chat}` } });
        await eventually(() => telegram.callsOf("sendMessage").find((call) => call.payload.text === `Made file ${chat}.`), `the answer in chat ${chat}`, 30_000);
        assert.equal(existsSync(join(workspace.path, `made-${chat}.txt`)), true);
        assert.ok(telegram.callsOf("answerCallbackQuery").some((call) => call.payload.callback_query_id === query && call.payload.text === "Approved"));
      }
      const poller = gateways.findIndex((gateway) => gateway.stderr().includes("telegram.poller elected"));
      t.diagnostic(`gateway ${poller} polled; turns logged per gateway: ${gateways.map((gateway) => (gateway.stderr().match(/session\.message received active/g) ?? []).length).join(", ")}`);
    } finally {
      for (const gateway of gateways) gateway.kill();
      await Promise.all(gateways.map((gateway) => gateway.exited));
      await telegram.close();
      for (const dir of [workspace, ...homes]) await dir.cleanup();
    }
  });
});
