/**
 * `bub gateway` of the installed package with BUB_TELEGRAM_WEBHOOK_URL on loopback: the fake
 * Bot API POSTs updates to it (with the secret token, resending until a 2xx, as Telegram
 * does), and an update taken just before a `kill -9` is run again once after the restart.
 * Fake Bot API and fake model on 127.0.0.1; every wait has a deadline.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { FAKE_BOT, startFakeTelegram, type FakeTelegram } from "../support/fake-telegram.ts";
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

  /** A private message `msg-<n>` from chat 1000+n, as update `updateId`. */
  function update(updateId: number, n: number): Record<string, unknown> {
    const chat = 1000 + n;
    return { update_id: updateId, message: { message_id: updateId, date: 0, chat: { id: chat, type: "private" }, from: { id: chat, is_bot: false, first_name: "U" }, text: `msg-${n}` } };
  }

  /** POSTs an update straight to the webhook (as Telegram's parallel deliveries would, in any order); it must be taken. */
  async function post(body: Record<string, unknown>): Promise<void> {
    assert.equal(await telegram.webhook.post(body), 200, `update ${String(body.update_id)} is taken`);
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

  it("runs a late update below the highest id after a restart, and a repeat of a seen one not again", async () => {
    let gateway = await start();
    // Telegram delivers webhook updates in parallel: 2003 and 2004 arrive after 2005.
    for (const [id, n] of [[2005, 5], [2003, 3], [2004, 4]] as const) await post(update(id, n));
    await within(telegram.waitForCalls("sendMessage", 3), 20_000, "three replies");
    await sigterm(gateway);
    gateway = await start();
    // 2002 was never seen: it is taken and answered (it was acknowledged and dropped).
    await post(update(2002, 2));
    await within(telegram.waitForCalls("sendMessage", 4), 20_000, "the reply to the late update");
    await post(update(2004, 4));
    await sigterm(gateway);
    assert.deepEqual(replies().sort(), ["1002 re: msg-2", "1003 re: msg-3", "1004 re: msg-4", "1005 re: msg-5"], "each once, the repeat of 2004 not again");
    assert.equal(openai.requests.length, 4);
  });

  it("keeps the ids it saw through a compaction of the journal, without a restart", async () => {
    const gateway = await start();
    await post(update(2005, 5));
    await post(update(2004, 4));
    await within(telegram.waitForCalls("sendMessage", 2), 20_000, "two replies");
    // Group chatter the bot is not addressed in runs no turn but is journaled: enough of it
    // to cross the journal's compaction (256 lines).
    for (let id = 2006; id < 2006 + 140; id++) {
      await post({ update_id: id, message: { message_id: id, date: 0, chat: { id: -77, type: "group", title: "G" }, from: { id: 77, is_bot: false, first_name: "G" }, text: `chatter ${id}` } });
    }
    const journal = (await readFile(join(home.path, ".bub", "inbound", `telegram-${FAKE_BOT.id}.jsonl`), "utf8")).split("\n").filter(Boolean);
    const mark: unknown = JSON.parse(journal[0] ?? "{}");
    assert.ok(journal.length < 140 && typeof mark === "object" && mark !== null && "last" in mark && Number(mark.last) > 2100, `the journal was compacted after the chatter: ${journal[0]}`);
    await post(update(2003, 3));
    await within(telegram.waitForCalls("sendMessage", 3), 20_000, "the reply to the late update");
    await post(update(2005, 5));
    await sigterm(gateway);
    assert.deepEqual(replies().sort(), ["1003 re: msg-3", "1004 re: msg-4", "1005 re: msg-5"], "each once, the repeat of 2005 not again");
    assert.equal(openai.requests.length, 3, "the chatter ran no turn");
  });
});
