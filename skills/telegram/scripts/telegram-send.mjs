#!/usr/bin/env node
// Sends a message through the Telegram Bot API. Markdown is converted to Telegram HTML;
// long texts are split at the 4096-character limit. Usage: see ../SKILL.md.
import { parseArgs } from "node:util";
import { botMention, callApi, fail, markdownToTelegramHtml, readText, splitMessage, TelegramError, tokenFrom } from "./telegram-lib.mjs";

const { values } = parseArgs({
  options: {
    "chat-id": { type: "string", short: "c" },
    message: { type: "string", short: "m" },
    "message-file": { type: "string" },
    "reply-to": { type: "string", short: "r" },
    format: { type: "string", default: "markdown" },
    token: { type: "string", short: "t" },
    "source-is-bot": { type: "boolean", default: false },
    "source-username": { type: "string" },
    "source-user-id": { type: "string" },
    "source-display-name": { type: "string" },
    silent: { type: "boolean", default: false },
  },
});

if (!values["chat-id"]) fail("--chat-id is required");
if (values.message === undefined && !values["message-file"]) fail("--message is required (use - to read it from stdin)");
if (!["markdown", "html", "plain"].includes(values.format)) fail("--format must be markdown, html or plain");
const token = tokenFrom(values.token);
const text = readText(values.message, values["message-file"]);
if (!text.trim()) fail("the message is empty");

let replyTo = values["reply-to"] ? Number(values["reply-to"]) : undefined;
if (replyTo !== undefined && !Number.isInteger(replyTo)) fail("--reply-to must be a message id (a number)");
let prefix = "";
if (values["source-is-bot"] && replyTo === undefined && !text.startsWith("/")) {
  const mention = botMention({ sourceUserId: values["source-user-id"], sourceUsername: values["source-username"], sourceDisplayName: values["source-display-name"] });
  if (mention === null) fail("--source-is-bot without --reply-to needs --source-username or --source-user-id");
  prefix = mention;
}

const convert = values.format === "markdown" ? markdownToTelegramHtml : (part) => part;
const parseMode = values.format === "plain" ? undefined : "HTML";
const chatIds = values["chat-id"].split(",").map((id) => id.trim()).filter(Boolean);

async function sendPart(chatId, part, first) {
  const payload = { chat_id: chatId, text: (first ? prefix : "") + convert(part) };
  if (parseMode) payload.parse_mode = parseMode;
  if (values.silent) payload.disable_notification = true;
  if (first && replyTo !== undefined) payload.reply_to_message_id = replyTo;
  try {
    return await callApi(token, "sendMessage", payload);
  } catch (error) {
    if (!(error instanceof TelegramError) || error.status !== 400) throw error;
    if (payload.reply_to_message_id !== undefined && !/parse entities/i.test(error.description)) {
      // The message to reply to may be gone: send it as a normal message.
      delete payload.reply_to_message_id;
      return callApi(token, "sendMessage", payload);
    }
    if (parseMode && /parse entities/i.test(error.description)) {
      // Formatting Telegram rejects: send the text as it was written.
      return callApi(token, "sendMessage", { chat_id: chatId, text: (first && prefix ? prefix.replace(/<[^>]+>/g, "") : "") + part });
    }
    throw error;
  }
}

try {
  for (const chatId of chatIds) {
    const parts = splitMessage(text, 4096 - prefix.length, convert);
    const ids = [];
    for (const [index, part] of parts.entries()) ids.push((await sendPart(chatId, part, index === 0)).message_id);
    process.stdout.write(`sent to ${chatId}: message_id=${ids.join(",")}\n`);
  }
} catch (error) {
  fail(error.message);
}
