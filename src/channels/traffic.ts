/**
 * One log line per message a channel hands in and per reply sent out, at info under
 * {@link TRAFFIC_NAMESPACE}: the channel, the chat and the first words, so a gateway's
 * terminal shows what it is doing (`bub gateway` shows these records by default). Secrets in
 * the words are redacted by the logger, as in every record.
 */
import type { Envelope } from "../kernel/envelope.ts";
import { createLogger } from "../kernel/log.ts";

/** The namespace of the per-message lines. */
export const TRAFFIC_NAMESPACE = "bub:messages";

/** How much of a message a line shows. */
const PREVIEW_CHARS = 60;

const log = createLogger(TRAFFIC_NAMESPACE);

/** The text of a message (the `message` field of a channel's JSON content), on one line, clipped to `limit` characters. */
export function messagePreview(content: string, limit = PREVIEW_CHARS): string {
  let text = content;
  const trimmed = content.trim();
  if (trimmed.startsWith("{")) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (typeof parsed === "object" && parsed !== null && "message" in parsed && typeof parsed.message === "string") text = parsed.message;
    } catch {
      // Not JSON: shown as written.
    }
  }
  const line = text.replace(/\s+/g, " ").trim();
  const chars = [...line];
  return chars.length <= limit ? line : `${chars.slice(0, limit - 1).join("").trimEnd()}…`;
}

function where(message: Envelope, channel: string): string {
  return `${channel} chat_id=${message.chatId || "?"} session_id=${message.sessionId ?? "?"}`;
}

/** Logs a message a channel handed in: `in telegram chat_id=7 session_id=telegram:7: what was said`. */
export function logInbound(message: Envelope): void {
  log.info(`in ${where(message, message.channel)}: ${messagePreview(message.content)}`);
}

/** Logs a reply a channel sent: `out telegram chat_id=7 session_id=telegram:7: the answer`. */
export function logOutbound(message: Envelope, channel: string): void {
  log.info(`out ${where(message, channel)}: ${messagePreview(message.content)}`);
}
