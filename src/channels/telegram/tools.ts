/**
 * `telegram.send` and `telegram.edit`: the model talks to Telegram chats through the running
 * channel's own Bot API client, inside the gateway process, so the bot token never reaches
 * the model, a skill or a tool's environment (docs/security.md, *Secrets*). Registered on the
 * framework's tools while the Telegram channel runs.
 */
import type { Api } from "grammy";
import { z } from "zod";
import { BubError } from "../../kernel/errors.ts";
import { registerTool } from "../../tools/global.ts";
import { defineTool, type Tool } from "../../tools/tool.ts";
import type { TurnState } from "../../kernel/types.ts";
import { grammySignal } from "./client.ts";
import type { ToolSendOptions } from "./send-options.ts";
import { formatOne, formatText, sendPart, telegramReason as reason, TEXT_FORMATS, type TelegramPart, type TextFormat } from "./format.ts";
import { TELEGRAM_TEXT_LIMIT } from "./split.ts";

/** The Bot API calls the tools make (the channel's grammY `bot.api`). */
export type TelegramBotApi = Pick<Api, "sendMessage" | "editMessageText">;

type Format = TextFormat;

/**
 * Sends a `telegram.send` message through the channel's delivery ledger: recorded before it
 * is sent, retried like a reply; resolves with the sent message ids once Telegram confirmed
 * it, rejects when it became a dead letter.
 */
export type LedgerSend = (message: { chatId: string; sessionId: string; text: string; options: ToolSendOptions }, signal?: AbortSignal) => Promise<readonly string[]>;

const chatIdSchema = () =>
  z.union([z.string(), z.number().int()]).nullable().optional().describe("The chat id (chat_id=... in the message context); default: this turn's Telegram chat.");
const formatSchema = () => z.enum(TEXT_FORMATS).default("markdown").describe("markdown (converted to Telegram formatting), html (Telegram HTML as is) or plain.");

/** The chat of a turn from a Telegram chat (`telegram:<chat id>`), else null. */
function turnChat(state: TurnState): string | null {
  const session = state.session_id ?? "";
  return session.toLowerCase().startsWith("telegram:") ? session.slice("telegram:".length) : null;
}

/**
 * The chat to use: the given one or the turn's. A turn from one Telegram chat may not write
 * to another chat (one person's conversation must not reach another's, docs/security.md).
 */
function chatFor(tool: string, given: string | number | null | undefined, state: TurnState): string {
  const own = turnChat(state);
  const chat = given === null || given === undefined || String(given).trim() === "" ? own : String(given).trim();
  if (chat === null) throw new BubError("invalid_input", `${tool}: chat_id is required outside a Telegram turn`);
  if (own !== null && chat !== own) throw new BubError("invalid_input", `${tool}: chat ${chat} is not this turn's chat (${own}); a turn from a Telegram chat may only write to its own chat`);
  return chat;
}

/** The one message of a `telegram.edit` text. */
function oneOf(text: string, format: Format): TelegramPart {
  return format === "markdown" ? formatOne(text) : { text, parseMode: format === "html" ? "HTML" : undefined, plain: text };
}

/**
 * The two tools over a Bot API client that is there while the channel runs (`api()` null
 * otherwise). With `ledger` (the running channel's), `telegram.send` goes through the
 * delivery ledger like a reply; without one (a bare client) it calls the Bot API itself.
 * `telegram.edit` always calls it: it changes a message in place, and doing so twice is harmless.
 */
export function telegramTools(api: () => TelegramBotApi | null, ledger: () => LedgerSend | null = () => null): Tool[] {
  const running = (tool: string): TelegramBotApi => {
    const client = api();
    if (!client) throw new BubError("tool", `${tool}: the Telegram channel is not running`);
    return client;
  };

  const send = defineTool({
    name: "telegram.send",
    description:
      "Send a message to a Telegram chat (Markdown by default; texts over 4096 characters are split into several messages). " +
      "Returns the sent message ids, for telegram.edit.",
    parameters: () =>
      z.object({
        text: z.string().min(1).describe("The message text."),
        chat_id: chatIdSchema(),
        reply_to: z.number().int().nullable().optional().describe("Answer this message id as a reply (sent normally if that message is gone)."),
        format: formatSchema(),
        silent: z.boolean().default(false).describe("Send without a notification sound."),
      }),
    context: true,
    async run({ text, chat_id, reply_to, format, silent }, { state, signal }) {
      const chat = chatFor("telegram.send", chat_id, state);
      const send = ledger();
      if (send) {
        const sessionId = state.session_id ?? `telegram:${chat}`;
        try {
          const ids = await send({ chatId: chat, sessionId, text, options: { format, silent, replyTo: reply_to ?? null } }, signal);
          return `sent to ${chat}: message_id=${ids.join(",")}`;
        } catch (error) {
          throw new BubError("tool", `telegram.send to ${chat} failed: ${reason(error)}`, { cause: error });
        }
      }
      const apiSignal = signal && grammySignal(signal);
      const client = running("telegram.send");
      const parts = formatText(text, format);
      const ids: number[] = [];
      for (const [index, part] of parts.entries()) {
        const other = {
          ...(silent ? { disable_notification: true } : {}),
          ...(reply_to != null && index === 0 ? { reply_parameters: { message_id: reply_to, allow_sending_without_reply: true } } : {}),
        };
        try {
          const sent = await sendPart(part, (body, parseMode) => client.sendMessage(chat, body, parseMode ? { ...other, parse_mode: parseMode } : other, apiSignal));
          ids.push(sent.message_id);
        } catch (error) {
          const done = ids.length > 0 ? ` after sending ${ids.length} of ${parts.length} parts (message_id=${ids.join(",")})` : "";
          throw new BubError("tool", `telegram.send to ${chat} failed${done}: ${reason(error)}`, { cause: error });
        }
      }
      return `sent to ${chat}: message_id=${ids.join(",")}`;
    },
  });

  const edit = defineTool({
    name: "telegram.edit",
    description: "Replace the text of a message the bot sent earlier (for progress updates). Markdown by default; at most 4096 characters.",
    parameters: () =>
      z.object({
        message_id: z.number().int().describe("The id telegram.send returned."),
        text: z.string().min(1).describe("The new text."),
        chat_id: chatIdSchema(),
        format: formatSchema(),
      }),
    context: true,
    async run({ message_id, text, chat_id, format }, { state, signal }) {
      const chat = chatFor("telegram.edit", chat_id, state);
      const apiSignal = signal && grammySignal(signal);
      if (text.length > TELEGRAM_TEXT_LIMIT) {
        throw new BubError("invalid_input", `telegram.edit: the text has ${text.length} characters and one message holds ${TELEGRAM_TEXT_LIMIT}; shorten it or send the rest with telegram.send`);
      }
      const client = running("telegram.edit");
      try {
        await sendPart(oneOf(text, format), (body, parseMode) => client.editMessageText(chat, message_id, body, parseMode ? { parse_mode: parseMode } : {}, apiSignal));
      } catch (error) {
        if (/message is not modified/i.test(reason(error))) return `unchanged ${chat}: message_id=${message_id}`;
        throw new BubError("tool", `telegram.edit of ${chat}/${message_id} failed: ${reason(error)}`, { cause: error });
      }
      return `edited ${chat}: message_id=${message_id}`;
    },
  });

  return [send, edit];
}

/** Registers the tools on `framework`; returns a function that removes them again. */
export function registerTelegramTools(framework: object, api: () => TelegramBotApi | null, ledger?: () => LedgerSend | null): () => void {
  const removals = telegramTools(api, ledger).map((tool) => registerTool(framework, tool));
  return () => {
    for (const remove of removals) remove();
  };
}
