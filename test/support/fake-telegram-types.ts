/** The types of the fake Telegram Bot API (./fake-telegram.ts), which re-exports them. */

/** One Bot API call the bot made. */
export interface RecordedCall {
  method: string;
  payload: Record<string, unknown>;
  /** The HTTP status the fake answered with (0: it dropped the connection). */
  status: number;
}

/**
 * A scripted failure for the next call of a method: a 429 with `parameters.retry_after`
 * (seconds), another error status (5xx, 400, 403, ...), a dropped connection (with
 * `delivered`, dropped after the call took effect: Telegram has the message, the bot never
 * hears so; recorded with status 200), or a call never answered (`hang`). With `chatId`, only
 * a call to that chat takes it.
 */
export type FakeFailure = ({ status: 429; retryAfter: number } | { status: number; description?: string } | { network: true; delivered?: boolean } | { hang: true }) & { chatId?: number };

/** A Telegram user as the fake sends it. */
export interface FakeUser {
  id: number;
  is_bot?: boolean;
  first_name?: string;
  username?: string;
}

/** Options for {@link FakeTelegram.sendMessage}. */
export interface FakeMessageInit {
  chatId: number;
  chatType?: "private" | "group" | "supergroup" | "channel";
  from?: FakeUser;
  /** Extra message fields: text, caption, photo, entities, reply_to_message, ... */
  fields?: Record<string, unknown>;
}
