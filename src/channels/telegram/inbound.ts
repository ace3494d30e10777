/**
 * Receiving: who may talk to the bot (the allowlists, and how a refusal is said), `/start`,
 * and turning a Telegram message into a {@link ChannelMessage} with its media.
 */
import type { Bot, Context } from "grammy";
import type { Message, Update, User } from "grammy/types";
import { createLogger } from "../../kernel/log.ts";
import type { MessageHandler } from "../../kernel/types.ts";
import { ChannelMessage, type MediaItem } from "../message.ts";
import type { TelegramConnection } from "./client.ts";
import { downloadFile } from "./download.ts";
import { isAddressed, mediaKind, messageContent, messageMedia, messageMetadata } from "./parse.ts";
import type { TelegramSettings } from "./settings.ts";

const log = createLogger("bub:telegram");

const NOT_ALLOWED = "You are not allowed to chat with me. Please deploy your own instance of Bub.";
const ACCESS_DENIED = "Access denied.";

/** What receiving reads from the running channel, at the time a message arrives. */
export interface InboundContext {
  readonly bot: Bot | null;
  readonly botInfo: User | null;
  readonly settings: TelegramSettings | null;
  /** The connection's fetch (file downloads go through the same proxy). */
  readonly fetch: TelegramConnection["fetch"] | undefined;
  /** The user allowlist (ids and lowercased usernames); empty admits every user. */
  readonly users: Set<string>;
  /** The chat allowlist; empty admits every chat. */
  readonly chats: Set<string>;
  /** Where admitted messages go, with the update each came in (a queued update's job is found by it). */
  readonly messageHandler: (message: ChannelMessage, update: Update) => Promise<void>;
  /** The lifespan that shows typing in a chat while its turn runs. */
  typingLifespan(chatId: string): NonNullable<ChannelMessage["lifespan"]>;
}

/** Why a message may not be served: null when it may. */
function refusal(context: InboundContext, message: Message): "chat" | "user" | null {
  const { chats, users } = context;
  if (chats.size > 0 && !chats.has(String(message.chat.id))) return "chat";
  const user = message.from;
  if (users.size > 0 && !(user && (users.has(String(user.id)) || (user.username && users.has(user.username.toLowerCase()))))) return "user";
  return null;
}

/**
 * Turns away a message the allowlists do not admit: one short refusal in a private chat;
 * silence in a group, where a refusal would speak to everyone (logged at info when the
 * message addressed the bot).
 */
async function turnAway(ctx: Context, message: Message, refused: "chat" | "user", answer: string, addressed: boolean): Promise<void> {
  const who = `user_id=${message.from?.id ?? "?"} chat_id=${message.chat.id}`;
  if (message.chat.type === "private") {
    log.info(`telegram.denied ${who} (not in the ${refused} allowlist): refused`);
    await ctx.reply(answer);
    return;
  }
  if (addressed) log.info(`telegram.denied ${who} chat_type=${message.chat.type} (not in the ${refused} allowlist): ignored`);
  else log.debug(`telegram.denied ${who} chat_type=${message.chat.type}: ignored`);
}

/** Answers `/start`, refusing chats and users the allowlists do not admit. */
export async function onStart(context: InboundContext, ctx: Context): Promise<void> {
  const message = ctx.message;
  if (!message) return;
  const refused = refusal(context, message);
  if (refused) return turnAway(ctx, message, refused, NOT_ALLOWED, true);
  await ctx.reply("Bub is online. Send text to start.");
}

/** Hands an admitted message (or `/bub <commandText>`) to the message handler. */
export async function onMessage(context: InboundContext, ctx: Context, commandText?: string): Promise<void> {
  const message = ctx.message;
  if (!message?.from) return;
  if (commandText === undefined && message.entities?.some((entity) => entity.type === "bot_command" && entity.offset === 0)) return;
  const refused = refusal(context, message);
  if (refused === "chat") return;
  if (refused === "user") {
    const addressed = commandText !== undefined || (context.botInfo ? isAddressed(message, context.botInfo) : false);
    return turnAway(ctx, message, refused, ACCESS_DENIED, addressed);
  }
  await context.messageHandler(toChannelMessage(context, message, commandText), ctx.update);
}

function toChannelMessage(context: InboundContext, message: Message, commandText?: string): ChannelMessage {
  const chatId = String(message.chat.id);
  const sessionId = `telegram:${chatId}`;
  const content = commandText ?? messageContent(message);
  // Who sent it and from what kind of chat, for identity links (kept out of the prompt by the `_`).
  const sender = message.from ? { _sender_id: String(message.from.id), _chat_type: message.chat.type } : {};
  if (content.trim().startsWith(",")) {
    return new ChannelMessage({ sessionId, channel: "telegram", chatId, content: content.trim(), outputChannel: "telegram", context: sender });
  }
  const metadata = messageMetadata(message);
  const media: MediaItem[] = [];
  const own = mediaItem(context, message);
  if (own) media.push(own);
  const reply = message.reply_to_message;
  if (reply?.from) {
    metadata.reply_to_message = { message: messageContent(reply), ...messageMetadata(reply) };
    const replied = mediaItem(context, reply);
    if (replied) media.push(replied);
  }
  return new ChannelMessage({
    sessionId,
    channel: "telegram",
    chatId,
    content: JSON.stringify({ message: content, ...metadata }),
    isActive: context.botInfo ? isAddressed(message, context.botInfo) : message.chat.type === "private",
    media,
    lifespan: context.typingLifespan(chatId),
    outputChannel: "telegram",
    context: sender,
  });
}

function mediaItem(context: InboundContext, message: Message): MediaItem | null {
  const media = messageMedia(message);
  if (!media) return null;
  const { settings } = context;
  const limit = settings?.max_file_bytes ?? 2 * 1024 * 1024;
  const bot = context.bot;
  const token = settings?.token.trim() ?? "";
  const apiRoot = (settings?.api_root ?? "https://api.telegram.org").replace(/\/+$/, "");
  const fetch = context.fetch;
  return {
    ...mediaKind(message, media),
    filename: media.file_name,
    dataFetcher: async () => {
      if (!bot || !fetch || (media.file_size !== undefined && media.file_size > limit)) return null;
      const file = await bot.api.getFile(media.file_id);
      if (!file.file_path || (file.file_size !== undefined && file.file_size > limit)) return null;
      return downloadFile(`${apiRoot}/file/bot${token}/${file.file_path}`, { fetch, maxBytes: limit });
    },
  };
}
