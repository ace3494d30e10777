#!/usr/bin/env node
// Sends (or, with --edit, edits) a rich message: structured HTML or Markdown rendered by
// Telegram itself (sendRichMessage, Bot API rich-html-style). Usage: see ../SKILL.md.
import { parseArgs } from "node:util";
import { callApi, fail, readText, TelegramError, tokenFrom } from "./telegram-lib.mjs";

const { values } = parseArgs({
  options: {
    "chat-id": { type: "string", short: "c" },
    html: { type: "string" },
    "html-file": { type: "string" },
    markdown: { type: "string" },
    "markdown-file": { type: "string" },
    rtl: { type: "boolean", default: false },
    "skip-entity-detection": { type: "boolean", default: false },
    "reply-to": { type: "string", short: "r" },
    "disable-notification": { type: "boolean", default: false },
    edit: { type: "string" },
    token: { type: "string", short: "t" },
  },
});

if (!values["chat-id"]) fail("--chat-id is required");
const hasHtml = values.html !== undefined || values["html-file"] !== undefined;
const hasMarkdown = values.markdown !== undefined || values["markdown-file"] !== undefined;
if (hasHtml === hasMarkdown) fail("give exactly one of --html/--html-file or --markdown/--markdown-file");
const token = tokenFrom(values.token);

const rich = hasHtml ? { html: readText(values.html, values["html-file"]) } : { markdown: readText(values.markdown, values["markdown-file"]) };
if (!(rich.html ?? rich.markdown).trim()) fail("the message is empty");
if (values.rtl) rich.is_rtl = true;
if (values["skip-entity-detection"]) rich.skip_entity_detection = true;

try {
  if (values.edit !== undefined) {
    const messageId = Number(values.edit);
    if (!Number.isInteger(messageId)) fail("--edit takes a message id (a number)");
    await callApi(token, "editMessageText", { chat_id: values["chat-id"], message_id: messageId, rich_message: JSON.stringify(rich) });
    process.stdout.write(`edited ${values["chat-id"]}: message_id=${messageId}\n`);
  } else {
    const payload = { chat_id: values["chat-id"], rich_message: JSON.stringify(rich) };
    if (values["disable-notification"]) payload.disable_notification = true;
    if (values["reply-to"] !== undefined) payload.reply_to_message_id = Number(values["reply-to"]);
    let result;
    try {
      result = await callApi(token, "sendRichMessage", payload);
    } catch (error) {
      if (!(error instanceof TelegramError) || error.status !== 400 || payload.reply_to_message_id === undefined) throw error;
      delete payload.reply_to_message_id;
      result = await callApi(token, "sendRichMessage", payload);
    }
    process.stdout.write(`sent to ${values["chat-id"]}: message_id=${result?.message_id}\n`);
  }
} catch (error) {
  fail(error.message);
}
