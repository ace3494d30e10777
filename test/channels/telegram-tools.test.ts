// telegram.send and telegram.edit against a fake Bot API through a grammY client, as the
// running Telegram channel provides it.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Api } from "grammy";
import { markdownToTelegramHtml } from "../../src/channels/telegram/markdown.ts";
import { registerTelegramTools, telegramTools, type TelegramBotApi } from "../../src/channels/telegram/tools.ts";
import { toolsOf } from "../../src/tools/global.ts";
import { join } from "node:path";
import { DeliveryLedger } from "../../src/channels/delivery/ledger.ts";
import { openSqliteDeliveryStore } from "../../src/channels/delivery/sqlite-store.ts";
import { telegramSender } from "../../src/channels/telegram/delivery.ts";
import { toolSendOptions } from "../../src/channels/telegram/send-options.ts";
import { tempDir } from "../support/temp.ts";
import { startFakeTelegram, type FakeTelegram } from "../support/fake-telegram.ts";
import { call, errorOf, toolContext } from "../tools/support/tool-context.ts";

const TOKEN = "123:tools-test";

describe("telegram tools", () => {
  let telegram: FakeTelegram;
  let api: TelegramBotApi;
  let tools: ReturnType<typeof telegramTools>;
  const inChat = (chat: string) => toolContext({ session_id: `telegram:${chat}` });

  before(async () => {
    telegram = await startFakeTelegram({ token: TOKEN });
    api = new Api(TOKEN, { apiRoot: telegram.apiRoot });
    tools = telegramTools(() => api);
  });
  after(async () => {
    await telegram.close();
  });

  it("sends Markdown as Telegram HTML to the turn's chat, as a reply, and answers the message id", async () => {
    const before = telegram.callsOf("sendMessage").length;
    const result = await call(tools, "telegram.send", { text: "**done**: see `x` <here>", reply_to: 5, silent: true }, inChat("42"));
    const [sent] = telegram.callsOf("sendMessage").slice(before);
    assert.match(String(result), /^sent to 42: message_id=\d+$/);
    assert.equal(sent!.payload.chat_id, "42");
    assert.equal(sent!.payload.text, "<b>done</b>: see <code>x</code> &lt;here&gt;");
    assert.equal(sent!.payload.parse_mode, "HTML");
    assert.equal(sent!.payload.disable_notification, true);
    assert.deepEqual(sent!.payload.reply_parameters, { message_id: 5, allow_sending_without_reply: true });
  });

  it("splits long texts and sends plain text again when Telegram cannot parse the formatting", async () => {
    const before = telegram.callsOf("sendMessage").length;
    const long = `${"a".repeat(3000)}\n\n${"b".repeat(3000)}`;
    const result = await call(tools, "telegram.send", { text: long, format: "plain" }, inChat("42"));
    assert.match(String(result), /^sent to 42: message_id=\d+,\d+$/);
    telegram.fail("sendMessage", { status: 400, description: "Bad Request: can't parse entities: unsupported start tag" });
    await call(tools, "telegram.send", { text: "<oops>", format: "html" }, inChat("42"));
    const sent = telegram.callsOf("sendMessage").slice(before);
    assert.deepEqual(sent.map((entry) => [String(entry.payload.text).length, entry.payload.parse_mode]), [[3000, undefined], [3000, undefined], [6, "HTML"], [6, undefined]]);
  });

  it("edits a message", async () => {
    const result = await call(tools, "telegram.edit", { message_id: 9, text: "_progress_: 50%" }, inChat("42"));
    assert.equal(result, "edited 42: message_id=9");
    const edit = telegram.callsOf("editMessageText").at(-1)!;
    assert.deepEqual([edit.payload.chat_id, edit.payload.message_id, edit.payload.text, edit.payload.parse_mode], ["42", 9, "<i>progress</i>: 50%", "HTML"]);
  });

  it("keeps a Telegram turn to its own chat, needs a chat elsewhere, and fails when the channel is not running", async () => {
    assert.match(await errorOf(call(tools, "telegram.send", { text: "hi", chat_id: 43 }, inChat("42"))), /chat 43 is not this turn's chat \(42\)/);
    assert.match(await errorOf(call(tools, "telegram.send", { text: "hi" }, toolContext({ session_id: "cli:local" }))), /chat_id is required outside a Telegram turn/);
    assert.match(String(await call(tools, "telegram.send", { text: "hi", chat_id: 43 }, toolContext({ session_id: "cli:local" }))), /^sent to 43: /);
    const stopped = telegramTools(() => null);
    assert.match(await errorOf(call(stopped, "telegram.send", { text: "hi" }, inChat("42"))), /the Telegram channel is not running/);
    telegram.fail("sendMessage", { status: 403, description: "Forbidden: bot was blocked by the user" });
    assert.match(await errorOf(call(tools, "telegram.send", { text: "hi" }, inChat("42"))), /telegram\.send to 42 failed: Forbidden: bot was blocked by the user/);
  });

  it("with the channel's ledger, sends through it: recorded first, a 502 retried, the ids answered; a 403 makes a dead letter and fails the call", async () => {
    const dir = await tempDir();
    const store = openSqliteDeliveryStore(join(dir.path, "delivery.sqlite3"));
    const ledger = new DeliveryLedger({ store, source: "telegram-1", sender: telegramSender(new Api(TOKEN, { apiRoot: telegram.apiRoot }), () => undefined), policy: { maxAttempts: 3, backoffMs: 10, maxBackoffMs: 10 }, exclusive: true });
    await ledger.start();
    try {
      const viaLedger = telegramTools(
        () => api,
        () => (message, signal) => ledger.deliver({ chatId: message.chatId, sessionId: message.sessionId, text: message.text, inbound: [], options: toolSendOptions(message.options) }, signal),
      );
      const before = telegram.callsOf("sendMessage").length;
      telegram.fail("sendMessage", { status: 502 });
      const result = String(await call(viaLedger, "telegram.send", { text: "**done**", reply_to: 5, silent: true }, inChat("42")));
      const calls = telegram.callsOf("sendMessage").slice(before);
      assert.deepEqual(calls.map((entry) => entry.status), [502, 200], "the failed call was retried by the ledger");
      const delivered = calls[1]!;
      assert.match(result, /^sent to 42: message_id=\d+$/);
      assert.deepEqual([delivered.payload.text, delivered.payload.parse_mode, delivered.payload.disable_notification, delivered.payload.reply_parameters], ["<b>done</b>", "HTML", true, { message_id: 5, allow_sending_without_reply: true }]);
      assert.deepEqual(await store.list(["pending", "dead", "sent"]), [], "confirmed and forgotten");

      telegram.fail("sendMessage", { status: 403, description: "Forbidden: bot was blocked by the user" });
      assert.match(await errorOf(call(viaLedger, "telegram.send", { text: "hi" }, inChat("42"))), /telegram\.send to 42 failed: .*403 Forbidden: bot was blocked by the user \(a dead letter: bub delivery list, bub delivery retry \d+\)/);
      const [dead] = await store.list(["dead"]);
      assert.deepEqual([dead?.text, dead?.chatId, JSON.parse(dead?.options ?? "{}")], ["hi", "42", { send: { format: "markdown", silent: false, replyTo: null } }]);
    } finally {
      await ledger.close();
      await dir.cleanup();
    }
  });

  it("registers on a framework's tools and removes them again", () => {
    const framework = {};
    const remove = registerTelegramTools(framework, () => api);
    assert.ok(toolsOf(framework).has("telegram.send") && toolsOf(framework).has("telegram.edit"));
    remove();
    assert.ok(!toolsOf(framework).has("telegram.send"));
  });

  it("converts Markdown blocks", () => {
    assert.equal(markdownToTelegramHtml("# Title\n- one\n> quoted\n```js\nx < 1\n```\n[link](https://e.x/?a=1&b=2)"), '<b>Title</b>\n• one\n<blockquote>quoted</blockquote>\n<pre><code class="language-js">x &lt; 1</code></pre>\n<a href="https://e.x/?a=1&amp;b=2">link</a>');
  });
});
