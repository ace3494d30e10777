/**
 * The webhook on the shared queue: with BUB_DATABASE_URL, an update pushed to the webhook is
 * written to the queue before the request is answered 200, runs from the queue, and an update
 * pushed twice (Telegram retrying) runs once.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import pg from "pg";
import { ChannelManager } from "../../../src/channels/manager.ts";
import { createTelegramChannel } from "../../../src/channels/telegram/channel.ts";
import { telegramSettings } from "../../../src/channels/telegram/settings.ts";
import { webhookSecret } from "../../../src/channels/telegram/webhook.ts";
import { channelSettings } from "../../../src/builtin/settings.ts";
import type { BubFramework } from "../../../src/kernel/framework.ts";
import { FAKE_BOT } from "../../support/fake-telegram.ts";
import { usePostgres } from "../../support/postgres.ts";
import { testFramework } from "../support.ts";
import { recordingModel, telegram, TEST_RETRY, texts, TOKEN, useFakeTelegram } from "../telegram-support.ts";
import { freePort } from "../../support/ports.ts";

useFakeTelegram();
const postgres = usePostgres();

/** A gateway (manager + Telegram channel) whose settings include BUB_DATABASE_URL. */
async function gateway(env: Record<string, string>) {
  const model = recordingModel();
  let bub: BubFramework | null = null;
  const framework = () => {
    if (!bub) throw new Error("no framework yet");
    return bub;
  };
  bub = testFramework([model.plugin], { BUB_TELEGRAM_TOKEN: TOKEN, BUB_TELEGRAM_API_ROOT: telegram.apiRoot, ...env });
  bub.settings.register(telegramSettings);
  bub.settings.register(channelSettings);
  const running = bub;
  const manager = new ChannelManager(running, {
    enabledChannels: ["telegram"],
    channels: (messageHandler) => [createTelegramChannel(running, { messageHandler, retry: TEST_RETRY })],
    debounce: { debounceSeconds: 0, maxWaitSeconds: 0 },
    graceSeconds: 5,
  });
  const stop = new AbortController();
  const done = manager.run(stop.signal);
  await manager.ready();
  return {
    close: async () => {
      stop.abort();
      await done;
    },
  };
}

function textUpdate(updateId: number, chatId: number, text: string): Record<string, unknown> {
  return { update_id: updateId, message: { message_id: updateId, date: 0, chat: { id: chatId, type: "private", first_name: "U" }, from: { id: chatId, is_bot: false, first_name: "U" }, text } };
}

describe("the Telegram webhook on the shared queue", () => {
  it("queues pushed updates before answering 200, runs them from the queue, and runs a repeat once", async () => {
    const url = await (await postgres()).createDatabase();
    const port = await freePort();
    const bot = await gateway({
      BUB_TELEGRAM_WEBHOOK_URL: `http://127.0.0.1:${port}/bub/telegram`,
      BUB_TELEGRAM_WEBHOOK_LISTEN: `127.0.0.1:${port}`,
      BUB_TELEGRAM_ALLOW_ALL: "true",
      BUB_DATABASE_URL: url,
    });
    const secret = webhookSecret("", TOKEN);
    try {
      assert.equal(await telegram.webhook.post(textUpdate(10, 7, "hello"), secret), 200);
      assert.equal(await telegram.webhook.post(textUpdate(11, 8, "there"), secret), 200);
      assert.equal(await telegram.webhook.post(textUpdate(10, 7, "hello"), secret), 200, "a repeat is answered too");
      await telegram.waitForCalls("sendMessage", 2);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        // Accepted once each (graphile-worker deletes a job once done; the accepted keys stay).
        const { rows } = await client.query<{ key: string }>("SELECT message_key AS key FROM bub_queue_accepted ORDER BY message_key");
        assert.deepEqual(
          rows.map((row) => row.key),
          [`telegram:${FAKE_BOT.id}:10`, `telegram:${FAKE_BOT.id}:11`],
          "one job per update",
        );
      } finally {
        await client.end();
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual(texts().sort(), ["echo: hello", "echo: there"]);
    } finally {
      await bot.close();
    }
  });
});
