/**
 * Steering across gateway processes: two `bub gateway` processes (from the sources) on one
 * PostgreSQL with `BUB_ADMISSION=steer`. A message that arrives while its chat's turn runs
 * reaches that turn (whichever process runs it, whichever took the message from Telegram)
 * and is answered by it, not run as a turn of its own. Fake Bot API and fake model.
 */
import assert from "node:assert/strict";
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

describe("steering a turn that runs in another gateway process", () => {
  const model = useFakeOpenAI();

  it("hands a message for a busy chat to its running turn, which answers both", { timeout: 120_000 }, async (t) => {
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
      BUB_ADMISSION: "steer",
      BUB_TELEGRAM_POLLER_RETRY_SECONDS: "1",
      BUB_LOG_LEVEL: "info",
    };
    const gateways: SourceGateway[] = homes.map((home) => startSourceGateway(workspace.path, telegram, { ...env, BUB_HOME: join(home.path, ".bub") }));
    try {
      await eventually(() => (gateways.every((gateway) => gateway.stderr().includes("telegram.queue serving bot")) && gateways.some((gateway) => gateway.stderr().includes("telegram.poller elected")) ? true : undefined), "both gateways on the queue, one polling", 60_000);
      // The first answer takes long enough for the second message to arrive during the turn.
      model.script(reply.text("Here is a poem.", { delayMs: 3000 }), reply.text("And now it rhymes."));
      telegram.sendText({ chatId: 7, userId: 7, text: "write a poem" });
      await model.waitForRequest(0);
      telegram.sendText({ chatId: 7, userId: 7, text: "make it rhyme" });
      const [sent] = await telegram.waitForCalls("sendMessage", 1);
      assert.equal(sent?.payload.text, "Here is a poem.\n\nAnd now it rhymes.");
      assert.equal(model.requests.length, 2, "one turn, two model steps");
      assert.match(JSON.stringify(model.requests[1]?.body.messages), /make it rhyme/);
      const runner = gateways.findIndex((gateway) => gateway.stderr().includes("steered into the running turn of session telegram:7"));
      assert.ok(runner >= 0, gateways.map((gateway) => gateway.stderr()).join("\n"));
      const poller = gateways.findIndex((gateway) => gateway.stderr().includes("telegram.poller elected"));
      t.diagnostic(`the turn ran in gateway ${runner}, the messages were taken by gateway ${poller}`);
      // The steered message is done with the turn: it never runs as a turn of its own.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.equal(model.requests.length, 2);
      assert.equal(telegram.callsOf("sendMessage").length, 1);
    } finally {
      for (const gateway of gateways) gateway.kill();
      await Promise.all(gateways.map((gateway) => gateway.exited));
      await telegram.close();
      for (const dir of [workspace, ...homes]) await dir.cleanup();
    }
  });
});
