/**
 * What a Telegram message means to Bub: its type, the text the model reads, its metadata,
 * its media, and whether the bot was addressed (private chat, mention, reply).
 */
import type { Message, MessageEntity, User } from "grammy/types";
import type { MediaItem } from "../message.ts";

/** The message types Bub distinguishes, in the order they are checked. */
export type TelegramMessageType = "text" | "photo" | "audio" | "sticker" | "video" | "voice" | "document" | "video_note" | "unknown";

/** Facts about a Telegram file, as kept in a message's metadata. */
export interface TelegramMedia {
  file_id: string;
  file_size?: number;
  width?: number;
  height?: number;
  duration?: number;
  mime_type?: string;
  file_name?: string;
  emoji?: string;
  set_name?: string;
  is_animated?: boolean;
  is_video?: boolean;
}

/** The type of a message. */
export function messageType(message: Message): TelegramMessageType {
  if (message.text !== undefined) return "text";
  if (message.photo) return "photo";
  if (message.audio) return "audio";
  if (message.sticker) return "sticker";
  if (message.video) return "video";
  if (message.voice) return "voice";
  if (message.document) return "document";
  if (message.video_note) return "video_note";
  return "unknown";
}

function withCaption(text: string, caption: string | undefined): string {
  return caption ? `${text} Caption: ${caption}` : text;
}

/** The text the model reads for a message (a description for non-text messages). */
export function messageContent(message: Message): string {
  // The same order as messageType: the first field present decides.
  const { text, photo, audio, sticker, video, voice, document, video_note } = message;
  if (text !== undefined) return text;
  if (photo) return withCaption("[Photo message]", message.caption);
  if (audio) {
    const title = audio.title || "Unknown";
    return audio.performer ? `[Audio: ${audio.performer} - ${title} (${audio.duration}s)]` : `[Audio: ${title} (${audio.duration}s)]`;
  }
  if (sticker) return sticker.emoji ? `[Sticker: ${sticker.emoji} from ${sticker.set_name ?? "unknown"}]` : `[Sticker from ${sticker.set_name ?? "unknown"}]`;
  if (video) return withCaption(`[Video: ${video.duration}s]`, message.caption);
  if (voice) return `[Voice message: ${voice.duration}s]`;
  if (document) return withCaption(`[Document: ${document.file_name || "unknown"} (${document.mime_type || "application/octet-stream"})]`, message.caption);
  if (video_note) return `[Video note: ${video_note.duration}s]`;
  const known = Object.keys(message).find((key) => !["message_id", "date", "chat", "from", "sender_chat", "reply_to_message", "message_thread_id", "edit_date"].includes(key));
  return `[Unsupported message type: ${known ?? "unknown"}]`;
}

/** Links of a message: `text_link` URLs and `url` entities (offsets are UTF-16 units, as JS strings). */
export function messageLinks(message: Message): string[] {
  const text = message.text ?? message.caption ?? "";
  const entities: MessageEntity[] = (message.entities?.length ? message.entities : message.caption_entities) ?? [];
  const links: string[] = [];
  for (const entity of entities) {
    let link: string | undefined;
    if (entity.type === "text_link") link = entity.url;
    else if (entity.type === "url") link = text.slice(entity.offset, entity.offset + entity.length).trim();
    if (link && !links.includes(link)) links.push(link);
  }
  return links;
}

/** `record` with its undefined and null properties removed (in place). */
function dropEmpty<T extends object>(record: T): T {
  for (const [key, value] of Object.entries(record)) if (value === undefined || value === null) Reflect.deleteProperty(record, key);
  return record;
}

/** The media facts of a message (the largest photo size), or null. */
export function messageMedia(message: Message): TelegramMedia | null {
  if (message.photo?.length) {
    const largest = message.photo.reduce((best, size) => (size.width * size.height >= best.width * best.height ? size : best));
    return dropEmpty({ file_id: largest.file_id, file_size: largest.file_size, width: largest.width, height: largest.height });
  }
  const file = message.audio ?? message.sticker ?? message.video ?? message.voice ?? message.document ?? message.video_note;
  if (!file) return null;
  // Each fact is read from the file kinds that have it.
  return dropEmpty<TelegramMedia>({
    file_id: file.file_id,
    file_size: file.file_size,
    width: "width" in file ? file.width : undefined,
    height: "height" in file ? file.height : undefined,
    duration: "duration" in file ? file.duration : undefined,
    mime_type: "mime_type" in file ? file.mime_type : undefined,
    file_name: "file_name" in file ? file.file_name : undefined,
    emoji: "emoji" in file ? file.emoji : undefined,
    set_name: "set_name" in file ? file.set_name : undefined,
    is_animated: "is_animated" in file ? file.is_animated : undefined,
    is_video: "is_video" in file ? file.is_video : undefined,
  });
}

/** How a message's media is handed to the model: kind and MIME type. */
export function mediaKind(message: Message, media: TelegramMedia): Pick<MediaItem, "type" | "mimeType"> {
  switch (messageType(message)) {
    case "photo":
      return { type: "image", mimeType: "image/jpeg" };
    case "sticker":
      return media.is_animated || media.is_video ? { type: "image", mimeType: "video/webm" } : { type: "image", mimeType: "image/webp" };
    case "audio":
      return { type: "audio", mimeType: media.mime_type ?? "audio/mpeg" };
    case "voice":
      return { type: "audio", mimeType: media.mime_type ?? "audio/ogg" };
    case "video":
    case "video_note":
      return { type: "video", mimeType: media.mime_type ?? "video/mp4" };
    default:
      return { type: "document", mimeType: media.mime_type ?? "application/octet-stream" };
  }
}

/** A message's metadata for the model (empty values removed). */
export function messageMetadata(message: Message): Record<string, unknown> {
  const user = message.from;
  const links = messageLinks(message);
  const media = messageMedia(message);
  return dropEmpty<Record<string, unknown>>({
    message_id: message.message_id,
    type: messageType(message),
    username: user?.username,
    full_name: user ? [user.first_name, user.last_name].filter(Boolean).join(" ") : undefined,
    sender_id: user ? String(user.id) : undefined,
    sender_is_bot: user?.is_bot,
    date: message.date,
    links: links.length > 0 ? links : undefined,
    media: media ?? undefined,
  });
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** True when `text` contains `name` as a whole word ("bub" matches "hey bub!", not "bubble"). */
export function mentionsWord(text: string, name: string): boolean {
  if (!name.trim()) return false;
  return new RegExp(`(?<![\\p{L}\\p{N}_])${escapeRegExp(name.trim())}(?![\\p{L}\\p{N}_])`, "iu").test(text);
}

/**
 * Whether the bot was addressed: always in a private chat; in a group when the message
 * replies to the bot, mentions `@<bot username>` (entity or text), mentions the bot by a
 * text_mention, or names it (`bub`, or its first name) as a word. Media without a caption
 * in a group counts only as a reply to the bot. Other chat types never are.
 */
export function isAddressed(message: Message, bot: User): boolean {
  if (messageType(message) === "unknown") return false;
  const chatType = message.chat.type;
  if (chatType === "private") return true;
  if (chatType !== "group" && chatType !== "supergroup") return false;
  const repliesToBot = message.reply_to_message?.from?.id === bot.id;
  const text = message.text ?? message.caption;
  if (text === undefined) return repliesToBot;
  if (repliesToBot) return true;
  const username = bot.username ? `@${bot.username}` : null;
  const entities = (message.entities?.length ? message.entities : message.caption_entities) ?? [];
  for (const entity of entities) {
    if (entity.type === "mention" && username && text.slice(entity.offset, entity.offset + entity.length).toLowerCase() === username.toLowerCase()) return true;
    if (entity.type === "text_mention" && entity.user.id === bot.id) return true;
  }
  if (username && text.toLowerCase().includes(username.toLowerCase())) return true;
  return mentionsWord(text, "bub") || mentionsWord(text, bot.first_name);
}
