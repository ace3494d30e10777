/**
 * Who sent a message, as a link identity (`<channel>:<sender>`), and whether the message
 * may join a linked person's shared session.
 */
import { userInfo } from "node:os";
import type { Envelope } from "../../kernel/envelope.ts";

/** The prefix of a shared session's id: `person:<person id>`. */
export const PERSON_SESSION_PREFIX = "person:";

/** The local terminal user's identity: `cli:<login name>`. */
export function cliIdentity(): string {
  let name: string;
  try {
    name = userInfo().username;
  } catch {
    name = process.env.USER ?? "local";
  }
  return `cli:${name}`;
}

/**
 * The identity of a message's sender when it comes from a private chat, else null. The CLI
 * is private (the local user); other channels name the sender in `context._sender_id` (or
 * `sender_id`) and are private when `context._chat_type` (or `chat_type`) says `private`, or,
 * without one, when the chat id is the sender's id.
 */
export function privateIdentity(message: Envelope): string | null {
  if (message.channel === "cli") return cliIdentity();
  const sender = message.context._sender_id ?? message.context.sender_id;
  if ((typeof sender !== "string" && typeof sender !== "number") || String(sender) === "") return null;
  const chatType = message.context._chat_type ?? message.context.chat_type;
  const isPrivate = chatType === undefined ? String(message.chatId) === String(sender) : chatType === "private";
  return isPrivate ? `${message.channel}:${String(sender)}` : null;
}

/**
 * True when the message's session is its channel's default (none set, `<channel>:<chat>`,
 * or the chat REPL's `cli_session`): a session chosen on purpose (`--session-id`) is kept.
 */
export function hasDefaultSession(message: Envelope): boolean {
  const session = message.sessionId?.trim() ?? "";
  return session === "" || session === `${message.channel}:${message.chatId}` || (message.channel === "cli" && session === "cli_session");
}
