/**
 * Steering across gateway processes: two `bub gateway` processes (from the sources) on one
 * PostgreSQL with `BUB_ADMISSION=steer`. A message that arrives while its chat's turn runs
 * reaches that turn (whichever process runs it, whichever took the message from Telegram)
 * and is answered by it, not run as a turn of its own. Fake Bot API and fake model.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { reply } from "../../support/fake-openai.ts";
import { useFakeOpenAI } from "../../support/fake-openai-suite.ts";
import { usePostgres } from "../../support/postgres.ts";
import { startTwoGateways } from "./support.ts";

const postgres = usePostgres();

describe("steering a turn that runs in another gateway process", () => {
  const model = useFakeOpenAI();

  it("hands a message for a busy chat to its running turn, which answers both", { timeout: 120_000 }, async (t) => {
    const url = await (await postgres()).createDatabase();
    const cluster = await startTwoGateways(url, model.url, { BUB_ADMISSION: "steer" });
    const { telegram, gateways } = cluster;
    try {
      // The first answer takes long enough for the second message to arrive during the turn.
      model.script(reply.text("Here is a poem.", { delayMs: 3000 }), reply.text("And now it rhymes."));
      telegram.sendText({ chatId: 7, userId: 7, text: "write a poem" });
      await model.waitForRequest(0);
      telegram.sendText({ chatId: 7, userId: 7, text: "make it rhyme" });
      const [sent] = await telegram.waitForCalls("sendMessage", 1);
      assert.equal(sent?.payload.text, "Here is a poem.\n\nAnd now it rhymes.");
      assert.equal(model.requests.length, 2, "one turn, two model steps");
      assert.match(JSON.stringify(model.requests[1]?.body.messages), /make it rhyme/);
      const runner = cluster.logging("steered into the running turn of session telegram:7");
      assert.ok(runner >= 0, gateways.map((gateway) => gateway.stderr()).join("\n"));
      const poller = cluster.logging("telegram.poller elected");
      t.diagnostic(`the turn ran in gateway ${runner}, the messages were taken by gateway ${poller}`);
      // The steered message is done with the turn: it never runs as a turn of its own.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.equal(model.requests.length, 2);
      assert.equal(telegram.callsOf("sendMessage").length, 1);
    } finally {
      await cluster.close();
    }
  });
});
