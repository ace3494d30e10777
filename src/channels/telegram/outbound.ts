/**
 * Sending replies to Telegram: the text of an outbound as formatted messages (./format.ts:
 * Markdown as Telegram HTML, split between blocks within Telegram's length limit, plain text
 * when Telegram rejects the formatting), or, when that would take too many messages, a short
 * preview plus the whole text as a file.
 */
import type { Bot } from "grammy";
import { createLogger } from "../../kernel/log.ts";
import type { Envelope } from "../../kernel/envelope.ts";
import { formatReply, sendPart, telegramReason, type TelegramPart } from "./format.ts";
import { previewOf } from "./split.ts";

const log = createLogger("bub:telegram");

/** A reply longer than this many messages goes out as a preview plus a file (`BUB_TELEGRAM_MAX_MESSAGES`). */
const DEFAULT_MAX_MESSAGES = 5;
/** The file a long reply is attached as. */
export const ANSWER_FILE = "answer.md";
/** The longest preview of a reply sent as a file, in UTF-16 units. */
const PREVIEW_CHARS = 1000;

/** What sending needs from the running channel. */
export interface OutboundTarget {
  /** The running bot; null while the channel is stopped. */
  bot: Bot | null;
  /** `BUB_TELEGRAM_MAX_MESSAGES`, when the settings were loaded. */
  maxMessages: number | undefined;
  describeError: (error: unknown) => string;
}

/** The text to send for an outbound: the `message` field of JSON content, else the content itself. */
export function outboundText(message: Envelope): string {
  const content = message.content;
  const trimmed = content.trim();
  if (trimmed.startsWith("{")) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
        const text = "message" in parsed ? parsed.message : undefined;
        return text === undefined || text === null ? "" : String(text);
      }
    } catch {
      // Not JSON: sent as written.
    }
  }
  return content;
}

/**
 * Sends an outbound message to its chat as Telegram HTML (see {@link formatReply}), split
 * between blocks at Telegram's length limit; one that would take more than `max_messages`
 * messages goes out as a preview and `answer.md` instead. A message that cannot be
 * delivered after the retries is logged with its session (the turn and its tape are
 * unaffected).
 */
export async function sendOutbound(message: Envelope, target: OutboundTarget): Promise<void> {
  const sessionId = message.sessionId ?? "?";
  const chatId = message.chatId;
  const text = outboundText(message);
  if (!text.trim()) return;
  const { bot, describeError } = target;
  if (!bot) {
    log.error(`telegram.send undeliverable session_id=${sessionId} chat_id=${chatId}: the channel is not running`);
    return;
  }
  const parts = formatReply(text);
  const maxMessages = target.maxMessages ?? DEFAULT_MAX_MESSAGES;
  if (parts.length > maxMessages) {
    await sendAsFile(bot, { sessionId, chatId, text, parts: parts.length }, describeError);
    return;
  }
  for (const [index, part] of parts.entries()) {
    try {
      await sendFormatted(bot, chatId, part, `session_id=${sessionId} chat_id=${chatId} part=${index + 1}/${parts.length}`);
    } catch (error) {
      log.error(`telegram.send undeliverable session_id=${sessionId} chat_id=${chatId} part=${index + 1}/${parts.length}: ${describeError(error)}`);
      return;
    }
  }
}

/** Sends one formatted part; when Telegram cannot parse its formatting, its plain text once (logged as a warning). */
function sendFormatted(bot: Bot, chatId: string, part: TelegramPart, where: string): Promise<unknown> {
  return sendPart(
    part,
    (text, parseMode) => bot.api.sendMessage(chatId, text, parseMode ? { parse_mode: parseMode } : undefined),
    (error) => log.warn(`telegram.send formatting refused ${where}: ${telegramReason(error)}; sent as plain text`),
  );
}

/**
 * Sends a reply too long for `max_messages` messages as a short preview message and the
 * whole text as `answer.md`. Each of the two is tried even when the other fails.
 */
async function sendAsFile(bot: Bot, reply: { sessionId: string; chatId: string; text: string; parts: number }, describeError: (error: unknown) => string): Promise<void> {
  const { sessionId, chatId, text, parts } = reply;
  const where = `session_id=${sessionId} chat_id=${chatId}`;
  log.info(`telegram.send long reply ${where} chars=${text.length} parts=${parts}: sent as a preview and ${ANSWER_FILE}`);
  const preview = `${previewOf(text, PREVIEW_CHARS)}\n\n… The full answer (${text.length.toLocaleString("en-US")} characters) is attached as ${ANSWER_FILE}.`;
  try {
    // The preview is at most PREVIEW_CHARS plus the note: one message, even as HTML.
    for (const part of formatReply(preview)) await sendFormatted(bot, chatId, part, `${where} part=preview`);
  } catch (error) {
    log.error(`telegram.send undeliverable ${where} part=preview: ${describeError(error)}`);
  }
  try {
    const { InputFile } = await import("grammy");
    await bot.api.sendDocument(chatId, new InputFile(Buffer.from(text, "utf8"), ANSWER_FILE));
  } catch (error) {
    log.error(`telegram.send undeliverable ${where} part=${ANSWER_FILE}: ${describeError(error)}`);
  }
}
