/**
 * Sending replies to Telegram: the text of an outbound as formatted messages (./format.ts:
 * Markdown as Telegram HTML, split between blocks within Telegram's length limit, plain text
 * when Telegram rejects the formatting), or, when that would take too many messages, a short
 * preview plus the whole text as a file. The delivery ledger (./delivery.ts) makes the calls.
 */
import type { Api } from "grammy";
import { createLogger } from "../../kernel/log.ts";
import type { Envelope } from "../../kernel/envelope.ts";
import { formatReply, sendPart, telegramReason, type TelegramPart } from "./format.ts";
import { previewOf } from "./split.ts";

const log = createLogger("bub:telegram");

/** A reply longer than this many messages goes out as a preview plus a file (`BUB_TELEGRAM_MAX_MESSAGES`). */
export const DEFAULT_MAX_MESSAGES = 5;
/** The file a long reply is attached as. */
export const ANSWER_FILE = "answer.md";
/** The longest preview of a reply sent as a file, in UTF-16 units. */
const PREVIEW_CHARS = 1000;

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

/** One Bot API call of a reply: a formatted message, or the whole text as `answer.md`. */
export type ReplyStep = { kind: "message"; part: TelegramPart; label: string } | { kind: "file"; text: string };

/**
 * The calls that send `text` (see {@link formatReply}): its parts as Telegram HTML, split
 * between blocks at Telegram's length limit; a text that would take more than `maxMessages`
 * messages becomes a short preview and `answer.md` instead. The same text always gives the
 * same calls, so the delivery ledger can resume a reply after the parts already confirmed.
 */
export function replySteps(text: string, maxMessages: number = DEFAULT_MAX_MESSAGES): ReplyStep[] {
  const parts = formatReply(text);
  if (parts.length <= maxMessages) return parts.map((part, index) => ({ kind: "message", part, label: `part=${index + 1}/${parts.length}` }));
  const preview = `${previewOf(text, PREVIEW_CHARS)}\n\n… The full answer (${text.length.toLocaleString("en-US")} characters) is attached as ${ANSWER_FILE}.`;
  // The preview is at most PREVIEW_CHARS plus the note: one message, even as HTML.
  const steps: ReplyStep[] = formatReply(preview).map((part) => ({ kind: "message", part, label: "part=preview" }));
  steps.push({ kind: "file", text });
  return steps;
}

/**
 * Makes one call of a reply to `chatId` (`where` names it in log lines); rejects with the
 * Bot API's error. A message whose formatting Telegram cannot parse is sent once more as
 * plain text (logged as a warning).
 */
export async function sendStep(api: Api, chatId: string, step: ReplyStep, where: string): Promise<void> {
  if (step.kind === "message") {
    await sendPart(
      step.part,
      (text, parseMode) => api.sendMessage(chatId, text, parseMode ? { parse_mode: parseMode } : undefined),
      (error) => log.warn(`telegram.send formatting refused ${where} ${step.label}: ${telegramReason(error)}; sent as plain text`),
    );
    return;
  }
  log.info(`telegram.send long reply ${where} chars=${step.text.length}: sent as a preview and ${ANSWER_FILE}`);
  const { InputFile } = await import("grammy");
  await api.sendDocument(chatId, new InputFile(Buffer.from(step.text, "utf8"), ANSWER_FILE));
}
