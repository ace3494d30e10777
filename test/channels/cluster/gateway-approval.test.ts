/**
 * BUB_APPROVAL=ask with two `bub gateway` processes (from the sources) on one PostgreSQL:
 * the Approve button is posted by the process running the turn, the press reaches the
 * elected poller, and the poller passes it on, so the turn goes on whichever process runs it.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { reply } from "../../support/fake-openai.ts";
import { useFakeOpenAI } from "../../support/fake-openai-suite.ts";
import { usePostgres } from "../../support/postgres.ts";
import { eventually } from "../../support/eventually.ts";
import { startTwoGateways } from "./support.ts";

const postgres = usePostgres();

describe("approval with several gateway processes", () => {
  const model = useFakeOpenAI();

  it("an Approve press reaches the process that asked, for turns run by either process", { timeout: 120_000 }, async (t) => {
    const url = await (await postgres()).createDatabase();
    const cluster = await startTwoGateways(url, model.url, { BUB_APPROVAL: "ask", BUB_TELEGRAM_ALLOW_USERS: "7,8,9,10" });
    const { telegram, gateways, workspace } = cluster;
    try {
      // One chat after another, so that the turns land on either process.
      for (const chat of [7, 8, 9, 10]) {
        model.script(reply.toolCalls([{ name: "bash", arguments: JSON.stringify({ cmd: `touch made-${chat}.txt && echo ran` }) }]), reply.text(`Made file ${chat}.`));
        telegram.sendText({ chatId: chat, userId: chat, text: "make a file" });
        const asked = await eventually(() => telegram.callsOf("sendMessage").find((call) => call.status === 200 && call.payload.chat_id === String(chat) && call.payload.reply_markup !== undefined), `the question in chat ${chat}`, 30_000);
        const approve = telegram.buttonsOf(asked)[0]?.data ?? "";
        const query = telegram.pressButton({ message: asked, data: approve, from: { id: chat, username: `user${chat}` } });
        await eventually(() => telegram.callsOf("sendMessage").find((call) => call.payload.text === `Made file ${chat}.`), `the answer in chat ${chat}`, 30_000);
        assert.equal(existsSync(join(workspace, `made-${chat}.txt`)), true);
        assert.ok(telegram.callsOf("answerCallbackQuery").some((call) => call.payload.callback_query_id === query && call.payload.text === "Approved"));
      }
      const poller = cluster.logging("telegram.poller elected");
      t.diagnostic(`gateway ${poller} polled; turns logged per gateway: ${gateways.map((gateway) => (gateway.stderr().match(/session\.message received active/g) ?? []).length).join(", ")}`);
    } finally {
      await cluster.close();
    }
  });
});
