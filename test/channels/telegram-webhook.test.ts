/**
 * The Telegram webhook (BUB_TELEGRAM_WEBHOOK_URL): the fake Bot API POSTs updates to the
 * gateway over 127.0.0.1 with the secret token header, as Telegram does.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { join } from "node:path";
import { describe, it } from "node:test";
import { ChannelMessage } from "../../src/channels/message.ts";
import { createTelegramChannel } from "../../src/channels/telegram/channel.ts";
import { telegramSettings } from "../../src/channels/telegram/settings.ts";
import { webhookSecret } from "../../src/channels/telegram/webhook.ts";
import { FAKE_BOT } from "../support/fake-telegram.ts";
import { deferred, testFramework } from "./support.ts";
import { gateway, logs, startAlone, telegram, TEST_RETRY, texts, TOKEN, useFakeTelegram } from "./telegram-support.ts";
import { freePort } from "../support/ports.ts";

useFakeTelegram();

/** The webhook settings for a free loopback port. */
async function webhookEnv(extra: Record<string, string> = {}): Promise<Record<string, string>> {
  const port = await freePort();
  return { BUB_TELEGRAM_WEBHOOK_URL: `http://127.0.0.1:${port}/bub/telegram`, BUB_TELEGRAM_WEBHOOK_LISTEN: `127.0.0.1:${port}`, BUB_TELEGRAM_ALLOW_ALL: "true", ...extra };
}

/** A private text message update from user `chatId`. */
function textUpdate(updateId: number, chatId: number, text: string): Record<string, unknown> {
  return { update_id: updateId, message: { message_id: updateId, date: 0, chat: { id: chatId, type: "private", first_name: "U" }, from: { id: chatId, is_bot: false, first_name: "U" }, text } };
}

describe("Telegram webhook", () => {
  it("registers the webhook instead of polling and answers pushed messages", async () => {
    const env = await webhookEnv();
    const bot = await gateway(env);
    const [registered] = telegram.callsOf("setWebhook");
    assert.equal(registered?.payload.url, env.BUB_TELEGRAM_WEBHOOK_URL);
    assert.equal(registered?.payload.secret_token, webhookSecret("", TOKEN), "derived from the bot token when none is set");
    assert.deepEqual(registered?.payload.allowed_updates, ["message", "callback_query"]);
    assert.equal(registered?.payload.drop_pending_updates, false);
    telegram.sendText({ chatId: 7, userId: 7, text: "hello" });
    telegram.sendText({ chatId: 8, userId: 8, text: "there" });
    await telegram.waitForCalls("sendMessage", 2);
    assert.deepEqual(texts().sort(), ["echo: hello", "echo: there"]);
    assert.deepEqual(telegram.webhook.deliveries, [{ updateId: 1, status: 200 }, { updateId: 2, status: 200 }]);
    await bot.close();
    assert.equal(telegram.getUpdatesCount, 0, "no getUpdates");
    assert.equal(telegram.callsOf("deleteWebhook").length, 0, "the webhook stays registered after the stop");
    assert.ok(telegram.webhook.registration);
  });

  it("derives one stable secret per bot token, and uses BUB_TELEGRAM_WEBHOOK_SECRET when set; neither reaches the logs", async () => {
    const derived = webhookSecret("", TOKEN);
    assert.equal(webhookSecret("", TOKEN), derived, "every process derives the same");
    assert.notEqual(webhookSecret("", "456:OTHER"), derived);
    assert.match(derived, /^[A-Za-z0-9_-]{16,256}$/, "a token Telegram accepts");
    assert.ok(!derived.includes(TOKEN));
    const bot = await gateway(await webhookEnv({ BUB_TELEGRAM_WEBHOOK_SECRET: "configured_secret-42" }));
    assert.equal(telegram.callsOf("setWebhook")[0]?.payload.secret_token, "configured_secret-42");
    assert.equal(await telegram.webhook.post(textUpdate(50, 7, "hi"), derived), 401, "the derived one is not accepted then");
    telegram.sendText({ chatId: 7, userId: 7, text: "hello" });
    await telegram.waitForCalls("sendMessage", 1);
    await bot.close();
    const logged = logs.map((entry) => entry.message).join("\n");
    assert.ok(!logged.includes("configured_secret-42") && !logged.includes(derived), logged);
  });

  it("refuses a request without the right secret token (401): nothing is recorded and no turn runs", async () => {
    const bot = await gateway(await webhookEnv());
    assert.equal(await telegram.webhook.post(textUpdate(100, 7, "intruder one"), "wrong-secret"), 401);
    assert.equal(await telegram.webhook.post(textUpdate(101, 7, "intruder two"), null), 401);
    assert.equal(await telegram.webhook.post(textUpdate(102, 7, "intruder three"), ""), 401);
    telegram.sendText({ chatId: 7, userId: 7, text: "hello" });
    await telegram.waitForCalls("sendMessage", 1);
    assert.deepEqual(texts(), ["echo: hello"]);
    assert.equal(bot.model.prompts.length, 1);
    const journal = await readFile(join(bot.manager.framework.home, "inbound", `telegram-${FAKE_BOT.id}.jsonl`), "utf8");
    assert.doesNotMatch(journal, /intruder/);
    await bot.close();
  });

  it("runs an update Telegram sends again only once, also when both copies arrive together", async () => {
    const bot = await gateway(await webhookEnv());
    const first = textUpdate(200, 7, "once");
    assert.equal(await telegram.webhook.post(first), 200);
    await telegram.waitForCalls("sendMessage", 1);
    assert.equal(await telegram.webhook.post(first), 200, "a repeat is acknowledged");
    const together = textUpdate(201, 8, "together");
    assert.deepEqual(await Promise.all([telegram.webhook.post(together), telegram.webhook.post(together)]), [200, 200]);
    // A later message is handed over after the repeats were answered: once it is answered, they were ignored.
    assert.equal(await telegram.webhook.post(textUpdate(202, 9, "last")), 200);
    await telegram.waitForCalls("sendMessage", 3);
    assert.deepEqual(texts().sort(), ["echo: last", "echo: once", "echo: together"]);
    assert.equal(bot.model.prompts.length, 3);
    await bot.close();
  });

  it("answers 400 to a body that is not a JSON update, and loses nothing", async () => {
    const bot = await gateway(await webhookEnv());
    assert.equal(await telegram.webhook.post("{not json"), 400);
    assert.equal(await telegram.webhook.post("[]"), 400);
    assert.equal(await telegram.webhook.post({ message: { text: "no update id" } }), 400);
    assert.equal(await telegram.webhook.post({ update_id: -1 }), 400);
    assert.equal(await telegram.webhook.post({ update_id: 5, message: "text" }), 400);
    assert.equal(await telegram.webhook.post(JSON.stringify({ update_id: 6, message: { text: "x".repeat(1024 * 1024) } })), 413);
    const registered = telegram.webhook.registration;
    assert.ok(registered);
    const elsewhere = await fetch(new URL("/other", registered.url), { method: "POST", headers: { "X-Telegram-Bot-Api-Secret-Token": registered.secret }, body: "{}" });
    assert.equal(elsewhere.status, 404);
    const get = await fetch(registered.url, { headers: { "X-Telegram-Bot-Api-Secret-Token": registered.secret } });
    assert.equal(get.status, 405);
    telegram.sendText({ chatId: 7, userId: 7, text: "still here" });
    await telegram.waitForCalls("sendMessage", 1);
    assert.deepEqual(texts(), ["echo: still here"]);
    await bot.close();
  });

  it("sends an update again until it is taken: one pushed while nothing listens is answered once the gateway starts", async () => {
    const env = await webhookEnv();
    const bot = await gateway(env);
    await bot.close();
    telegram.sendText({ chatId: 7, userId: 7, text: "while down" });
    const again = await gateway(env);
    await telegram.waitForCalls("sendMessage", 1);
    assert.deepEqual(texts(), ["echo: while down"]);
    assert.ok(telegram.webhook.deliveries.some((delivery) => delivery.status === 0), "refused while the gateway was down");
    assert.equal(telegram.webhook.deliveries.filter((delivery) => delivery.status === 200).length, 1);
    await again.close();
  });

  it("on stop, stops taking requests at once and answers the one under way before it resolves", async () => {
    const bub = testFramework([], { BUB_TELEGRAM_TOKEN: TOKEN, BUB_TELEGRAM_API_ROOT: telegram.apiRoot, ...(await webhookEnv()) });
    bub.settings.register(telegramSettings);
    const handed = deferred();
    const release = deferred();
    const received: string[] = [];
    const channel = createTelegramChannel(bub, {
      retry: TEST_RETRY,
      messageHandler: async (message) => {
        received.push(message instanceof ChannelMessage ? message.content : "?");
        handed.resolve();
        await release.promise;
      },
    });
    const running = new AbortController();
    await channel.start(running.signal);
    telegram.sendText({ chatId: 7, userId: 7, text: "in flight" });
    await handed.promise;
    running.abort();
    let stopped = false;
    const stopping = channel.stop().then(() => {
      stopped = true;
    });
    assert.equal(await telegram.webhook.post(textUpdate(300, 7, "too late")), 0, "no longer listening");
    assert.equal(stopped, false, "the request under way holds the stop");
    release.resolve();
    await stopping;
    await telegram.webhook.delivered(1);
    assert.deepEqual(telegram.webhook.deliveries.filter((delivery) => delivery.updateId === 1), [{ updateId: 1, status: 200 }]);
    assert.equal(received.length, 1);
    assert.match(received[0] ?? "", /"message":"in flight"/);
    const journal = await readFile(join(bub.home, "inbound", `telegram-${FAKE_BOT.id}.jsonl`), "utf8");
    assert.match(journal, /"in flight"/);
    assert.doesNotMatch(journal, /too late/);
  });

  it("refuses to start on a listen address in use or malformed", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const address = taken.address();
    assert.ok(typeof address === "object" && address !== null);
    try {
      await assert.rejects(startAlone({ BUB_TELEGRAM_WEBHOOK_URL: "https://example.com/hook", BUB_TELEGRAM_WEBHOOK_LISTEN: `127.0.0.1:${address.port}` }), /cannot listen on 127\.0\.0\.1:\d+: the address is in use/);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
    await assert.rejects(startAlone({ BUB_TELEGRAM_WEBHOOK_URL: "https://example.com/hook", BUB_TELEGRAM_WEBHOOK_LISTEN: "8788" }), /host:port/);
    await assert.rejects(startAlone({ BUB_TELEGRAM_WEBHOOK_URL: "ftp://example.com/hook" }), /https:\/\//);
    assert.equal(telegram.callsOf("setWebhook").length, 0);
  });

  it("polling again after a webhook deletes it and takes what it had not delivered", async () => {
    const env = await webhookEnv();
    const hooked = await gateway(env);
    await hooked.close();
    telegram.sendText({ chatId: 7, userId: 7, text: "left behind" });
    const polling = await gateway({ BUB_TELEGRAM_ALLOW_ALL: "true" });
    await telegram.waitForCalls("sendMessage", 1);
    assert.deepEqual(texts(), ["echo: left behind"]);
    assert.equal(telegram.webhook.registration, null);
    await polling.close();
  });
});
