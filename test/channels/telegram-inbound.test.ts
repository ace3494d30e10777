import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ChannelManager } from "../../src/channels/manager.ts";
import { CLOSED_BY_DEFAULT, createTelegramChannel } from "../../src/channels/telegram/channel.ts";
import { telegramSettings } from "../../src/channels/telegram/settings.ts";
import { isAddressed, mentionsWord } from "../../src/channels/telegram/parse.ts";
import type { PromptPart } from "../../src/kernel/envelope.ts";
import type { BubFramework } from "../../src/kernel/framework.ts";
import { FAKE_BOT } from "../support/fake-telegram.ts";
import { testFramework } from "./support.ts";
import { gateway, logs, recordingModel, telegram, texts, TOKEN, useFakeTelegram } from "./telegram-support.ts";
import type { Message, User } from "grammy/types";

useFakeTelegram();

describe("Telegram channel against the Bot API", () => {
  it("refuses to start without an allowlist, saying how to set one", async () => {
    let bub!: BubFramework;
    bub = testFramework([], { BUB_TELEGRAM_TOKEN: TOKEN, BUB_TELEGRAM_API_ROOT: telegram.apiRoot });
    bub.settings.register(telegramSettings);
    const manager = new ChannelManager(bub, { enabledChannels: ["telegram"], channels: (messageHandler) => [createTelegramChannel(bub, { messageHandler })] });
    await assert.rejects(manager.run(), (error: Error) => error.message === CLOSED_BY_DEFAULT);
    assert.match(CLOSED_BY_DEFAULT, /BUB_TELEGRAM_ALLOW_USERS/);
    assert.match(CLOSED_BY_DEFAULT, /BUB_TELEGRAM_ALLOW_ALL=true/);
    assert.equal(telegram.calls.length, 0, "nothing was sent to Telegram");
  });

  it("serves everyone only when BUB_TELEGRAM_ALLOW_ALL=true", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_ALL: "true" });
    telegram.sendText({ chatId: 5, userId: 5, text: "hi" });
    await telegram.waitForCalls("sendMessage", 1);
    assert.deepEqual(texts(), ["echo: hi"]);
    await bot.close();
  });

  it("answers an allowed user, showing typing while the turn runs", async () => {
    const model = recordingModel();
    const release = model.hold();
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7" }, model);
    const called = model.nextCall();
    telegram.sendText({ chatId: 7, userId: 7, text: "hello bot" });
    await called;
    const [typing] = await telegram.waitForCalls("sendChatAction", 1);
    assert.deepEqual(typing!.payload, { chat_id: "7", action: "typing" });
    assert.equal(telegram.callsOf("sendMessage").length, 0, "typing comes before the reply");
    release();
    await telegram.waitForCalls("sendMessage", 1);
    assert.deepEqual(texts(), ["echo: hello bot"]);
    const content = JSON.parse(String(model.prompts[0]));
    assert.equal(content.message, "hello bot");
    assert.equal(content.sender_id, "7");
    assert.equal(content.username, "user7");
    assert.equal(content.type, "text");
    await bot.close();
  });

  it("shows no typing for an answer that comes within a second", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7" });
    telegram.sendText({ chatId: 7, userId: 7, text: "quick" });
    await telegram.waitForCalls("sendMessage", 1);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    assert.equal(telegram.callsOf("sendChatAction").length, 0);
    await bot.close();
  });

  it("matches allowed usernames case-insensitively, with or without @", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "@Alice, 99" });
    telegram.sendText({ chatId: 8, userId: 8, username: "alice", text: "from alice" });
    await telegram.waitForCalls("sendMessage", 1);
    assert.deepEqual(texts(), ["echo: from alice"]);
    await bot.close();
  });

  it("tells a user who is not allowed 'Access denied.' in a private chat, once, and runs no turn", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7" });
    telegram.sendText({ chatId: 9, userId: 9, text: "let me in" });
    await telegram.waitForCalls("sendMessage", 1);
    // A later allowed message is the sync point: the refusal was the only thing sent.
    telegram.sendText({ chatId: 7, userId: 7, text: "hello" });
    await telegram.waitForCalls("sendMessage", 2);
    assert.deepEqual(texts(), ["Access denied.", "echo: hello"]);
    assert.equal(bot.model.prompts.length, 1);
    assert.ok(logs.some((line) => line.level === "info" && /telegram\.denied user_id=9 chat_id=9 .*refused/.test(line.message)));
    await bot.close();
  });

  it("ignores a stranger who addresses the bot in a group: nothing is posted, one info line says who and where", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7" });
    const mention = `@${FAKE_BOT.username} let me in`;
    const entities = [{ type: "mention", offset: 0, length: FAKE_BOT.username.length + 1 }];
    telegram.sendMessage({ chatId: -60, chatType: "supergroup", from: { id: 9, username: "mallory" }, fields: { text: mention, entities } });
    telegram.sendMessage({ chatId: -60, chatType: "supergroup", from: { id: 9, username: "mallory" }, fields: { text: "/start", entities: [{ type: "bot_command", offset: 0, length: 6 }] } });
    telegram.sendMessage({ chatId: -60, chatType: "supergroup", from: { id: 9, username: "mallory" }, fields: { text: "just chatting" } });
    telegram.sendMessage({ chatId: -60, chatType: "supergroup", from: { id: 7, username: "user7" }, fields: { text: `@${FAKE_BOT.username} hi`, entities } });
    await telegram.waitForCalls("sendMessage", 1);
    assert.deepEqual(texts(), [`echo: @${FAKE_BOT.username} hi`]);
    assert.equal(bot.model.prompts.length, 1);
    const denied = logs.filter((line) => line.message.startsWith("telegram.denied"));
    assert.deepEqual(denied.map((line) => line.level), ["info", "info", "debug"]);
    assert.match(denied[0]!.message, /user_id=9 chat_id=-60 chat_type=supergroup .*ignored/);
    await bot.close();
  });

  it("ignores chats outside the chat allowlist silently", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_CHATS: "100" });
    telegram.sendText({ chatId: 200, userId: 200, text: "outsider" });
    telegram.sendText({ chatId: 100, userId: 100, text: "insider" });
    await telegram.waitForCalls("sendMessage", 1);
    assert.deepEqual(texts(), ["echo: insider"]);
    assert.equal(bot.model.prompts.length, 1);
    await bot.close();
  });

  it("answers /start, refusing chats that are not allowed", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_CHATS: "1" });
    telegram.sendText({ chatId: 1, userId: 1, text: "/start" });
    telegram.sendText({ chatId: 2, userId: 2, text: "/start" });
    await telegram.waitForCalls("sendMessage", 2);
    assert.deepEqual(texts(), ["Bub is online. Send text to start.", "You are not allowed to chat with me. Please deploy your own instance of Bub."]);
    assert.equal(bot.model.prompts.length, 0);
    await bot.close();
  });

  it("in groups, starts turns only when addressed: /bub, @mention, reply, or the name as a word", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_CHATS: "-50" });
    const from = { id: 3, username: "carol" };
    const group = (text: string, fields: Record<string, unknown> = {}) => telegram.sendMessage({ chatId: -50, chatType: "supergroup", from, fields: { text, ...fields } });
    group("I like bubble tea");
    group("/bub what time is it", { entities: [{ type: "bot_command", offset: 0, length: 4 }] });
    await telegram.waitForCalls("sendMessage", 1);
    group(`@${FAKE_BOT.username} hi`, { entities: [{ type: "mention", offset: 0, length: FAKE_BOT.username.length + 1 }] });
    await telegram.waitForCalls("sendMessage", 2);
    group("thanks Bub!");
    await telegram.waitForCalls("sendMessage", 3);
    const prompts = bot.model.prompts.map((prompt) => JSON.parse(String(prompt)).message);
    assert.deepEqual(prompts, ["what time is it", `@${FAKE_BOT.username} hi`, "thanks Bub!"]);
    await bot.close();
  });

  it("hands a photo to the model as an image, and skips files over the size limit", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "4", BUB_TELEGRAM_MAX_FILE_BYTES: "1000" });
    const bytes = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]);
    telegram.addFile("small", bytes);
    telegram.addFile("huge", new Uint8Array(10), 5000);
    const photo = (fileId: string, size: number) => [{ file_id: `${fileId}-thumb`, file_unique_id: "t", width: 90, height: 90, file_size: 10 }, { file_id: fileId, file_unique_id: fileId, width: 800, height: 600, file_size: size }];
    telegram.sendMessage({ chatId: 4, from: { id: 4 }, fields: { photo: photo("small", bytes.byteLength), caption: "look" } });
    await telegram.waitForCalls("sendMessage", 1);
    telegram.sendMessage({ chatId: 4, from: { id: 4 }, fields: { photo: photo("huge", 5000) } });
    await telegram.waitForCalls("sendMessage", 2);
    const [withImage, tooBig] = bot.model.prompts as PromptPart[][];
    assert.ok(Array.isArray(withImage));
    assert.equal(JSON.parse(String(withImage![0]!.text)).message, "[Photo message] Caption: look");
    assert.deepEqual(withImage![1], { type: "image_url", image_url: { url: `data:image/jpeg;base64,${Buffer.from(bytes).toString("base64")}` } });
    assert.equal(typeof tooBig, "string", "an oversized photo reaches the model as text only");
    assert.equal(telegram.downloads, 1);
    await bot.close();
  });

});

describe("Telegram message rules", () => {
  const bot: User = { id: 1, is_bot: true, first_name: "Bub", username: "bub_bot" };
  const groupMessage = (fields: Partial<Message>): Message => ({ message_id: 1, date: 0, chat: { id: -1, type: "group", title: "g" }, from: { id: 2, is_bot: false, first_name: "A" }, ...fields }) as Message;

  it("matches the bot's name as a word only", () => {
    assert.equal(mentionsWord("hey bub, help", "bub"), true);
    assert.equal(mentionsWord("BUB?", "bub"), true);
    assert.equal(mentionsWord("bubble tea", "bub"), false);
    assert.equal(mentionsWord("hubbub", "bub"), false);
  });

  it("treats captionless media in a group as addressed only when replying to the bot", () => {
    const photo = [{ file_id: "f", file_unique_id: "u", width: 1, height: 1 }];
    assert.equal(isAddressed(groupMessage({ photo }), bot), false);
    assert.equal(isAddressed(groupMessage({ photo, reply_to_message: groupMessage({ from: bot }) as Message["reply_to_message"] }), bot), true);
  });

  it("reads mention entities with UTF-16 offsets", () => {
    const text = "😀 @bub_bot hi";
    assert.equal(isAddressed(groupMessage({ text, entities: [{ type: "mention", offset: 3, length: 8 }] }), bot), true);
  });
});
