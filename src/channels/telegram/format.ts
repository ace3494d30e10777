/**
 * A Markdown reply as the Telegram messages that carry it: converted to Telegram HTML
 * (./markdown.ts), split between blocks so no part cuts a tag or an entity, each part within
 * Telegram's limit after conversion, and each with its plain text (the Markdown source of
 * that part) to send instead when Telegram cannot parse the formatting.
 */
import { markdownBlocks, markdownToTelegramHtml, type TelegramBlock } from "./markdown.ts";
import { splitMessage, TELEGRAM_TEXT_LIMIT } from "./split.ts";

/** One message of a reply. */
export interface TelegramPart {
  /** The text to send: HTML when `parseMode` is set. */
  readonly text: string;
  /** `"HTML"`, or undefined when the text has no markup (then it is sent exactly as written). */
  readonly parseMode: "HTML" | undefined;
  /** The same part as plain text, for when Telegram rejects the formatting. */
  readonly plain: string;
}

function part(html: string, plain: string): TelegramPart {
  return html === plain ? { text: plain, parseMode: undefined, plain } : { text: html, parseMode: "HTML", plain };
}

const tooLong = (block: TelegramBlock, limit: number): boolean => block.html.length > limit || block.source.length > limit;

/** The pieces of a block's source to convert again: a code block's lines each keep their fence. */
function pieces(block: TelegramBlock, budget: number): string[] {
  if (block.code === undefined) return splitMessage(block.source, budget);
  const opening = block.source.split("\n", 1)[0] ?? "";
  const fence = /^\s*(`{3,}|~{3,})/.exec(opening)?.[1];
  return splitMessage(block.code, budget).map((lines) => (fence ? `${opening}\n${lines}\n${fence}` : `\`\`\`\n${lines}\n\`\`\``));
}

/**
 * A block too long for one message, as smaller blocks: a code block by lines (each piece its
 * own code block), anything else cut at paragraph, line or word boundaries (./split.ts),
 * each piece converted again. A block that cannot get shorter is kept whole.
 */
function splitBlock(block: TelegramBlock, limit: number): TelegramBlock[] {
  const budget = Math.max(1, Math.floor((limit * block.source.length) / Math.max(block.html.length, block.source.length) / 2));
  const split = pieces(block, budget);
  if (split.length < 2) return [block];
  return split.flatMap((piece, index) =>
    markdownBlocks(piece).flatMap((item, at) => {
      const placed = at === 0 ? { ...item, blankBefore: index === 0 && block.blankBefore } : item;
      return tooLong(placed, limit) ? splitBlock(placed, limit) : [placed];
    }),
  );
}

/**
 * The messages of a Markdown reply, in order: as many whole blocks per message as fit in
 * `limit` UTF-16 units (as HTML and as plain text), a longer block split on its own.
 *
 * ```ts
 * formatReply("**done**"); // [{ text: "<b>done</b>", parseMode: "HTML", plain: "**done**" }]
 * formatReply("ok");       // [{ text: "ok", parseMode: undefined, plain: "ok" }]
 * ```
 */
export function formatReply(markdown: string, limit = TELEGRAM_TEXT_LIMIT): TelegramPart[] {
  const blocks = markdownBlocks(markdown).flatMap((block) => (tooLong(block, limit) ? splitBlock(block, limit) : [block]));
  const parts: TelegramPart[] = [];
  let html = "";
  let plain = "";
  for (const block of blocks) {
    const separator = block.blankBefore ? "\n\n" : "\n";
    if (plain !== "" && (html.length + separator.length + block.html.length > limit || plain.length + separator.length + block.source.length > limit)) {
      parts.push(part(html, plain));
      html = "";
      plain = "";
    }
    html += (plain === "" ? "" : separator) + block.html;
    plain += (plain === "" ? "" : separator) + block.source;
  }
  if (plain !== "") parts.push(part(html, plain));
  return parts;
}

/** One message of Markdown that must fit one message: HTML, or the plain text when the HTML is too long. */
export function formatOne(markdown: string): TelegramPart {
  const html = markdownToTelegramHtml(markdown);
  return html.length <= TELEGRAM_TEXT_LIMIT ? part(html, markdown) : { text: markdown, parseMode: undefined, plain: markdown };
}

/** Telegram's own words for a failed call (grammY's GrammyError carries them in `description`). */
export function telegramReason(error: unknown): string {
  const description = typeof error === "object" && error !== null && "description" in error ? error.description : undefined;
  return typeof description === "string" && description ? description : error instanceof Error ? error.message : String(error);
}

/** Whether Telegram refused a message for its formatting (a 400 "can't parse entities"). */
export function isFormattingError(error: unknown): boolean {
  return /can't parse entities|unsupported start tag|can't find end tag/i.test(telegramReason(error));
}

/**
 * Sends one part with `send(text, parseMode)`; when Telegram cannot parse its formatting,
 * sends the part's plain text instead, once. `onFallback` hears the refusal.
 */
export async function sendPart<T>(item: TelegramPart, send: (text: string, parseMode: "HTML" | undefined) => Promise<T>, onFallback?: (error: unknown) => void): Promise<T> {
  try {
    return await send(item.text, item.parseMode);
  } catch (error) {
    if (item.parseMode === undefined || !isFormattingError(error)) throw error;
    onFallback?.(error);
    return send(item.plain, undefined);
  }
}

/** How a `telegram.send` text is written: Markdown (converted to Telegram HTML), Telegram HTML as written, or plain text. */
export const TEXT_FORMATS = ["markdown", "html", "plain"] as const;
export type TextFormat = (typeof TEXT_FORMATS)[number];

/** The messages of a text in `format`: Markdown converted and split between blocks, HTML or plain text split as written. */
export function formatText(text: string, format: TextFormat): TelegramPart[] {
  if (format === "markdown") return formatReply(text);
  return splitMessage(text).map((part) => ({ text: part, parseMode: format === "html" ? "HTML" : undefined, plain: part }));
}
