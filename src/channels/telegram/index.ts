/** The `telegram` channel: grammY long polling, allowlists, media, typing, split replies, retries. */
export { TelegramChannel, createTelegramChannel, CLOSED_BY_DEFAULT, type TelegramChannelOptions, type TelegramFramework } from "./channel.ts";
export { telegramSettings, parseAllowlist, type TelegramSettings } from "./settings.ts";
export { splitMessage, TELEGRAM_TEXT_LIMIT } from "./split.ts";
export type { TelegramRetryOptions } from "./client.ts";
export { isAddressed, mentionsWord, messageContent, messageMetadata, messageType, type TelegramMessageType } from "./parse.ts";
