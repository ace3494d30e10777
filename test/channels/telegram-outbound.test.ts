import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { splitMessage } from "../../src/channels/telegram/split.ts";
import { type FakeDocument } from "../support/fake-telegram.ts";
import { delivered, gateway, logs, recordingModel, telegram, texts, useFakeTelegram } from "./telegram-support.ts";
import { eventually } from "../support/eventually.ts";

useFakeTelegram();

describe("Telegram channel against the Bot API", () => {
  it("splits a long reply at paragraph boundaries, each part within the limit", async () => {
    const model = recordingModel();
    const paragraphs = Array.from({ length: 6 }, (_, index) => `Paragraph ${index}: ${"word ".repeat(200).trim()}.`);
    model.answerWith(() => paragraphs.join("\n\n"));
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7" }, model);
    telegram.sendText({ chatId: 7, userId: 7, text: "write a lot" });
    const calls = await telegram.waitForCalls("sendMessage", 2);
    const parts = calls.map((call) => String(call.payload.text));
    assert.ok(parts.every((part) => part.length <= 4096));
    assert.equal(parts.join("\n\n"), paragraphs.join("\n\n"));
    assert.ok(parts.every((part) => part.startsWith("Paragraph") && part.endsWith(".")));
    assert.equal(telegram.callsOf("sendDocument").length, 0, "a reply within BUB_TELEGRAM_MAX_MESSAGES is not attached");
    await bot.close();
  });

  it("sends a 2 MB reply as one preview message and answer.md instead of 513 messages", async () => {
    const model = recordingModel();
    const answer = Array.from({ length: 2 * 1024 }, (_, index) => `Line ${index}: ${"lorem ipsum ".repeat(84).trim()}`).join("\n");
    assert.ok(answer.length >= 2_000_000 && splitMessage(answer).length > 500);
    model.answerWith(() => answer);
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7" }, model);
    telegram.sendText({ chatId: 7, userId: 7, text: "write a book" });
    const [upload] = await telegram.waitForCalls("sendDocument", 1);
    const sent = texts();
    assert.equal(sent.length, 1);
    const preview = sent[0]!;
    assert.ok(preview.length <= 4096);
    const [head, note] = preview.split("\n\n… ");
    assert.ok(answer.startsWith(head!) && head!.length > 0 && head!.length <= 1000);
    assert.match(head!, /(lorem|ipsum)$/, "the preview ends at a word boundary");
    assert.equal(note, `The full answer (${answer.length.toLocaleString("en-US")} characters) is attached as answer.md.`);
    assert.equal(upload!.status, 200);
    assert.equal(String(upload!.payload.chat_id), "7");
    const document = upload!.payload.document as FakeDocument;
    assert.equal(document.filename, "answer.md");
    assert.equal(document.text, answer);
    assert.ok(logs.some((line) => line.level === "info" && /telegram\.send long reply session_id=telegram:7 chat_id=7 .*answer\.md/.test(line.message)));
    await bot.close();
  });

  it("attaches a reply only beyond BUB_TELEGRAM_MAX_MESSAGES messages", async () => {
    const model = recordingModel();
    const paragraph = (index: number) => `Part ${index}: ${"word ".repeat(700).trim()}.`;
    const replies = [2, 3].map((count) => Array.from({ length: count }, (_, index) => paragraph(index)).join("\n\n"));
    model.answerWith((prompt) => replies[Number(JSON.parse(String(prompt)).message)]!);
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7", BUB_TELEGRAM_MAX_MESSAGES: "2" }, model);
    telegram.sendText({ chatId: 7, userId: 7, text: "0" });
    await telegram.waitForCalls("sendMessage", 2);
    assert.deepEqual(texts(), [paragraph(0), paragraph(1)]);
    telegram.sendText({ chatId: 7, userId: 7, text: "1" });
    const [upload] = await telegram.waitForCalls("sendDocument", 1);
    assert.equal(telegram.callsOf("sendMessage").length, 3);
    assert.equal((upload!.payload.document as FakeDocument).text, replies[1]);
    await bot.close();
  });

  it("delivers a reply that got a 429 with retry_after once, exactly once", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7" });
    telegram.fail("sendMessage", { status: 429, retryAfter: 0 });
    telegram.sendText({ chatId: 7, userId: 7, text: "persist" });
    await telegram.waitForCalls("sendMessage", 2);
    await bot.manager.idle();
    assert.deepEqual(telegram.callsOf("sendMessage").map((call) => call.status), [429, 200]);
    assert.deepEqual(delivered(), ["echo: persist"]);
    assert.ok(logs.some((log) => log.level === "warn" && /telegram\.api sendMessage answered 429 Too Many Requests \(retry_after 0 s\)/.test(log.message)));
    assert.ok(!logs.some((log) => log.level === "error"), "nothing was undeliverable");
    await bot.close();
  });

  it("retries a reply after a 5xx answer (the ledger waits BUB_DELIVERY_BACKOFF_SECONDS first)", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7" });
    telegram.fail("sendMessage", { status: 502 });
    telegram.sendText({ chatId: 7, userId: 7, text: "again please" });
    await telegram.waitForCalls("sendMessage", 2);
    await bot.manager.idle();
    assert.deepEqual(telegram.callsOf("sendMessage").map((call) => call.status), [502, 200]);
    assert.deepEqual(delivered(), ["echo: again please"]);
    await bot.close();
  });

  it("does not wait out a retry_after above the longest wait: a dead letter at once, one line with the session, and it keeps serving", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7", BUB_DELIVERY_MAX_BACKOFF_SECONDS: "60" });
    telegram.fail("sendMessage", { status: 429, retryAfter: 3600 });
    telegram.sendText({ chatId: 7, userId: 7, text: "doomed" });
    await telegram.waitForCalls("sendMessage", 1);
    await bot.manager.idle();
    telegram.sendText({ chatId: 7, userId: 7, text: "again" });
    await telegram.waitForCalls("sendMessage", 2);
    const errors = logs.filter((log) => log.level === "error").map((log) => log.message);
    assert.deepEqual(errors, [
      "delivery.dead_letter id=1 chat_id=7 session_id=telegram:7 after 1 try: sendMessage answered 429 Too Many Requests (asked to wait 3600 s, longer than the longest wait, 60 s) — see bub delivery list, then bub delivery retry 1",
    ]);
    assert.deepEqual(delivered(), ["echo: again"]);
    await bot.close();
  });

  it("does not retry a 400: a dead letter with Telegram's description", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7" });
    telegram.fail("sendMessage", { status: 400, description: "Bad Request: chat not found" });
    telegram.sendText({ chatId: 7, userId: 7, text: "where" });
    await telegram.waitForCalls("sendMessage", 1);
    await bot.manager.idle();
    await eventually(() => logs.find((log) => log.level === "error"), "the dead letter's line");
    assert.equal(telegram.callsOf("sendMessage").length, 1);
    assert.ok(logs.some((log) => log.level === "error" && log.message.startsWith("delivery.dead_letter id=1 chat_id=7 session_id=telegram:7 after 1 try: sendMessage answered 400 Bad Request: chat not found")));
    await bot.close();
  });

  it("tries a reply whose connection died after the request left once more (possibly repeated), then gives it up: no blind retries", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7", BUB_DELIVERY_BACKOFF_SECONDS: "0.05" });
    for (let index = 0; index < 5; index++) telegram.fail("sendMessage", { network: true });
    telegram.sendText({ chatId: 7, userId: 7, text: "unlucky" });
    await telegram.waitForCalls("sendMessage", 2);
    const error = await eventually(() => logs.find((log) => log.level === "error"), "the dead letter's line");
    assert.match(error.message, /^delivery\.dead_letter id=1 chat_id=7 session_id=telegram:7 after 2 tries: Network request for 'sendMessage' failed! .*not tried a third time/);
    assert.ok(logs.some((log) => log.level === "warn" && /delivery\.retry id=1 .* try 1 failed \(possibly repeated\)/.test(log.message)));
    assert.equal(telegram.callsOf("sendMessage").length, 2, "one try, one more: never auto-retried on top");
    assert.deepEqual(delivered(), []);
    await bot.close();
  });

});

describe("splitMessage", () => {
  it("leaves short text alone", () => {
    assert.deepEqual(splitMessage("hi"), ["hi"]);
  });

  it("falls back to lines, then spaces, never cutting a word", () => {
    const lines = Array.from({ length: 3 }, (_, index) => `${index}`.repeat(30)).join("\n");
    assert.deepEqual(splitMessage(lines, 65), [`${"0".repeat(30)}\n${"1".repeat(30)}`, "2".repeat(30)]);
    const words = "alpha beta gamma delta";
    for (const part of splitMessage(words, 11)) assert.ok(words.split(" ").some((word) => part.includes(word)) && part.length <= 11);
    assert.deepEqual(splitMessage(words, 11), ["alpha beta", "gamma delta"]);
  });

  it("cuts a run without spaces hard, but never inside a surrogate pair", () => {
    const parts = splitMessage("😀".repeat(5), 5);
    assert.deepEqual(parts, ["😀😀", "😀😀", "😀"]);
  });
});
