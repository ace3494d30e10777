/**
 * `bub gateway` of the installed package with BUB_TELEGRAM_WEBHOOK_URL on loopback: the fake
 * Bot API POSTs updates to it (with the secret token, resending until a 2xx, as Telegram
 * does), and an update taken just before a `kill -9` is run again once after the restart.
 * Fake Bot API and fake model on 127.0.0.1; every wait has a deadline.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { startFakeTelegram, type FakeTelegram } from "../support/fake-telegram.ts";
import { echoModel } from "./support/echo-model.ts";
import { installedPackage, tempHome } from "./support/installed.ts";
import { pollUntil, readTapes, readyWithin, startBub, within, type LiveBub } from "./support/live.ts";
import { freePort } from "../support/ports.ts";

const TOKEN = "123456:E2E-WEBHOOK";

/** The model answers `re: msg-<n>` to the latest message it was given. */
const model = echoModel(/msg-\d+/);

describe("bub gateway serves a Telegram webhook (installed package)", () => {
  let openai: FakeOpenAI;
  let telegram: FakeTelegram;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let port: number;
  let live: LiveBub | null = null;
  before(async () => {
    await installedPackage();
    openai = await startFakeOpenAI();
  });
  after(() => openai.close());
  beforeEach(async () => {
    openai.requests.length = 0;
    model.hangs = 0;
    openai.script(...Array.from({ length: 20 }, () => model.answer));
    telegram = await startFakeTelegram({ token: TOKEN });
    home = await tempHome();
    port = await freePort();
  });
  afterEach(async () => {
    live?.kill();
    live = null;
    await telegram.close();
    await home.cleanup();
  });

  /** Starts the gateway; resolves once it registered the webhook. */
  async function start(): Promise<LiveBub> {
    const registered = telegram.callsOf("setWebhook").length;
    live = await startBub(["gateway"], {
      home: home.path,
      env: {
        BUB_HOME: join(home.path, ".bub"),
        BUB_MODEL: "local:any",
        BUB_API_BASE: openai.url,
        BUB_TELEGRAM_TOKEN: TOKEN,
        BUB_TELEGRAM_API_ROOT: telegram.apiRoot,
        BUB_TELEGRAM_ALLOW_ALL: "true",
        BUB_TELEGRAM_WEBHOOK_URL: `http://127.0.0.1:${port}/bub/telegram`,
        BUB_TELEGRAM_WEBHOOK_LISTEN: `127.0.0.1:${port}`,
        BUB_DEBOUNCE_SECONDS: "0",
        BUB_LOG_LEVEL: "debug",
      },
    });
    const started = live;
    await readyWithin(started, telegram.waitForCalls("setWebhook", registered + 1), 20_000, "the gateway to register its webhook", "bub gateway exited before it registered the webhook");
    return started;
  }

  function send(n: number): void {
    telegram.sendText({ chatId: 1000 + n, userId: 1000 + n, text: `msg-${n}` });
  }

  /** The replies Telegram accepted, by chat. */
  function replies(): string[] {
    return telegram.succeededOf("sendMessage").map((call) => `${String(call.payload.chat_id)} ${String(call.payload.text)}`);
  }

  async function sigterm(gateway: LiveBub): Promise<void> {
    gateway.child.kill("SIGTERM");
    const result = await gateway.exited(15_000);
    assert.equal(result.code, 0, `exit ${result.code} ${result.signal}\nstderr:\n${result.stderr}`);
  }

  it("answers pushed messages, refuses a wrong secret, keeps the webhook on SIGTERM, and never logs the secret", async () => {
    const gateway = await start();
    const [registration] = telegram.callsOf("setWebhook");
    assert.equal(registration?.payload.url, `http://127.0.0.1:${port}/bub/telegram`);
    const secret = String(registration?.payload.secret_token);
    assert.match(secret, /^[A-Za-z0-9_-]{16,}$/);
    for (let n = 0; n < 3; n++) send(n);
    await within(telegram.waitForCalls("sendMessage", 3), 20_000, "three replies");
    assert.deepEqual(replies().sort(), ["1000 re: msg-0", "1001 re: msg-1", "1002 re: msg-2"]);
    assert.equal(await telegram.webhook.post({ update_id: 99, message: { message_id: 99, date: 0, chat: { id: 5, type: "private" }, from: { id: 5, is_bot: false, first_name: "X" }, text: "msg-99" } }, "not-the-secret"), 401);
    assert.equal(await telegram.webhook.post("{"), 400);
    await sigterm(gateway);
    assert.equal(openai.requests.length, 3, "the refused update ran no turn");
    assert.equal(telegram.getUpdatesCount, 0);
    assert.equal(telegram.callsOf("deleteWebhook").length, 0, "the webhook stays registered");
    assert.ok(!gateway.stderr().includes(secret), "the secret token is not in the log");
    assert.match(gateway.stderr(), /telegram\.start serving the webhook/);
  });

  it("runs an update a kill -9 cut off once more after the restart, and answers what arrived while it was down", async () => {
    model.hangs = 1;
    let gateway = await start();
    send(0);
    await within(openai.waitForRequest(0), 15_000, "the model call that hangs");
    assert.deepEqual(telegram.webhook.deliveries, [{ updateId: 1, status: 200 }], "acknowledged before the turn ran");
    gateway.child.kill("SIGKILL");
    await gateway.exited(5_000);
    send(1);
    // Refused while down: the fake sends it again until the restarted gateway takes it.
    await pollUntil(() => (telegram.webhook.deliveries.some((delivery) => delivery.updateId === 2 && delivery.status === 0) ? true : undefined), "a refused delivery while the gateway is down", { timeoutMs: 10_000 });
    gateway = await start();
    await within(telegram.waitForCalls("sendMessage", 2), 20_000, "both replies");
    assert.deepEqual(replies().sort(), ["1000 re: msg-0", "1001 re: msg-1"]);
    assert.equal(openai.requests.length, 3, "the cut-off turn ran again once, the other once");
    const retried = openai.requests.filter((request) => JSON.stringify(request.body.messages).includes("retried_after_restart=true"));
    assert.equal(retried.length, 1);
    assert.match(JSON.stringify(retried[0]?.body.messages), /msg-0/);
    const entries = [...(await readTapes(join(home.path, ".bub"))).values()].flat();
    assert.ok(entries.some((entry) => JSON.stringify(entry.payload).includes("retried_after_restart=true")), "the retry is on the tape");
    // Telegram sending the first update again (its answer got lost, say) runs nothing.
    const repeat = { update_id: 1, message: { message_id: 1, date: 0, chat: { id: 1000, type: "private" }, from: { id: 1000, is_bot: false, first_name: "U" }, text: "msg-0" } };
    assert.equal(await telegram.webhook.post(repeat), 200);
    send(2);
    await within(telegram.waitForCalls("sendMessage", 3), 20_000, "the reply to the next message");
    assert.equal(openai.requests.length, 4, "the repeat ran no turn");
    await sigterm(gateway);
    assert.deepEqual(replies().sort(), ["1000 re: msg-0", "1001 re: msg-1", "1002 re: msg-2"], "no reply twice");
  });
});
