#!/usr/bin/env node
// Edits the text of a message the bot sent (editMessageText). Markdown is converted to
// Telegram HTML. Usage: see ../SKILL.md.
import { parseArgs } from "node:util";
import { callApi, fail, markdownToTelegramHtml, MESSAGE_LIMIT, readText, TelegramError, tokenFrom } from "./telegram-lib.mjs";

const { values } = parseArgs({
  options: {
    "chat-id": { type: "string", short: "c" },
    "message-id": { type: "string", short: "m" },
    text: { type: "string", short: "t" },
    "text-file": { type: "string" },
    format: { type: "string", default: "markdown" },
    token: { type: "string" },
  },
});

if (!values["chat-id"]) fail("--chat-id is required");
const messageId = Number(values["message-id"]);
if (!Number.isInteger(messageId)) fail("--message-id is required (a number)");
if (values.text === undefined && !values["text-file"]) fail("--text is required (use - to read it from stdin)");
if (!["markdown", "html", "plain"].includes(values.format)) fail("--format must be markdown, html or plain");
const token = tokenFrom(values.token);
const text = readText(values.text, values["text-file"]);
if (!text.trim()) fail("the text is empty");

const converted = values.format === "markdown" ? markdownToTelegramHtml(text) : text;
if (converted.length > MESSAGE_LIMIT) fail(`the text is ${converted.length} characters; an edited message holds at most ${MESSAGE_LIMIT}`);
const payload = { chat_id: values["chat-id"], message_id: messageId, text: converted };
if (values.format !== "plain") payload.parse_mode = "HTML";

try {
  try {
    await callApi(token, "editMessageText", payload);
  } catch (error) {
    if (!(error instanceof TelegramError) || !/parse entities/i.test(error.description)) throw error;
    await callApi(token, "editMessageText", { chat_id: values["chat-id"], message_id: messageId, text });
  }
  process.stdout.write(`edited ${values["chat-id"]}: message_id=${messageId}\n`);
} catch (error) {
  fail(error.message);
}
