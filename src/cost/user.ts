/**
 * Who sent a turn, for per-user totals and budgets: `<channel>:<sender id>` when the
 * channel says who wrote (the context's `sender_id`, as `bub run --sender-id` sets it, or the
 * `sender_id` of a Telegram message's JSON content), else the chat (`<channel>:<chat id>`).
 */
import type { Envelope } from "../kernel/envelope.ts";
import { isRecord } from "../kernel/guards.ts";

function senderOfContent(content: string): string | null {
  if (!content.startsWith("{")) return null;
  try {
    const parsed: unknown = JSON.parse(content);
    const sender = isRecord(parsed) ? parsed.sender_id : undefined;
    return typeof sender === "string" && sender !== "" ? sender : null;
  } catch {
    return null;
  }
}

/**
 * The user a message counts against.
 *
 * ```ts
 * turnUser({ channel: "telegram", chatId: "-100", content: '{"message":"hi","sender_id":"42"}', ... }); // "telegram:42"
 * ```
 */
export function turnUser(message: Pick<Envelope, "channel" | "chatId" | "content" | "context">): string {
  const fromContext = message.context.sender_id;
  const sender = typeof fromContext === "string" && fromContext !== "" ? fromContext : senderOfContent(message.content);
  return `${message.channel}:${sender ?? message.chatId}`;
}
