import { z } from "zod";
import { durationSeconds } from "../../config/duration.ts";
import { DEFAULT_WEBHOOK_LISTEN, parseListen } from "./settings.ts";

/** Telegram channel settings (YAML `telegram:`; env `BUB_TELEGRAM_*`). */
export const telegramSchema = z.object({
  token: z.string().default(""),
  /** Comma-separated user ids or usernames allowed to talk to the bot. */
  allow_users: z.string().default(""),
  /** Comma-separated chat ids the bot answers in. */
  allow_chats: z.string().default(""),
  /** Serve everyone when no allowlist is set (off: the agent has a shell). */
  allow_all: z.boolean().default(false),
  /** `http://`, `https://` or `socks5://` proxy for every Bot API call. */
  proxy: z.string().default(""),
  /** The Bot API server (a self-hosted one, or a fake in tests). */
  api_root: z.string().url("expected a URL such as https://api.telegram.org").default("https://api.telegram.org"),
  /** Media larger than this many bytes is not downloaded for the model. */
  max_file_bytes: z.number().int().min(0).default(2 * 1024 * 1024),
  /** A reply that would take more messages than this is sent as a preview plus `answer.md`. */
  max_messages: z.number().int().min(1).default(5),
  /** With PostgreSQL, how often a gateway that is not the bot's poller tries to become it. */
  poller_retry_seconds: durationSeconds().default(3),
  /** Serve updates on a webhook at this public URL instead of polling (empty: polling). */
  webhook_url: z.union([z.literal(""), z.url({ protocol: /^https?$/, error: "expected an https:// URL such as https://example.com/bub/telegram" })]).default(""),
  /** Where the webhook's HTTP server listens, `host:port` (a reverse proxy in front terminates TLS). */
  webhook_listen: z
    .string()
    .refine((value) => parseListen(value) !== null, "expected host:port, such as 127.0.0.1:8788 or [::1]:8788")
    .default(DEFAULT_WEBHOOK_LISTEN),
  /** A linked person's private chats with the bot share their session with the other linked channels (docs/channels.md#identity-links). */
  share_linked_sessions: z.boolean().default(false),
  /** The token Telegram sends with every webhook request; empty: derived from the bot token. */
  webhook_secret: z.string().regex(/^[A-Za-z0-9_-]{0,256}$/, "expected at most 256 of A-Z, a-z, 0-9, _ and -").default(""),
});
