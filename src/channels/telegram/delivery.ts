/**
 * Telegram's side of the delivery ledger (../delivery/): the calls a recorded reply takes
 * (./outbound.ts), and what a failed call means. Ledger sends use a Bot API client of their
 * own without @grammyjs/auto-retry (./client.ts {@link installFailureLogging}): the ledger
 * alone decides on retries, so a failure is never retried twice over, and a connection that
 * died after the request left is not retried blindly.
 */
import { GrammyError, HttpError, type Api } from "grammy";
import { errorMessage } from "../../config/thrown.ts";
import { networkFailure, type DeliveryFailure } from "../delivery/classify.ts";
import type { DeliverySender } from "../delivery/ledger.ts";
import type { DeliveryRecord } from "../delivery/types.ts";
import { describeTelegramError } from "./client.ts";
import { formatText, sendPart } from "./format.ts";
import { toolOptionsOf, type ToolSendOptions } from "./send-options.ts";
import { replySteps, sendStep } from "./outbound.ts";

/** Sends the parts of a `telegram.send` message from `record.partsDone` on; answers the sent message ids. */
async function sendToolParts(api: Api, record: DeliveryRecord, options: ToolSendOptions, partSent: (done: number, total: number) => Promise<void>): Promise<string[]> {
  const parts = formatText(record.text, options.format);
  const ids: string[] = [];
  if (record.partsDone >= parts.length) await partSent(parts.length, parts.length);
  for (let index = record.partsDone; index < parts.length; index++) {
    const part = parts[index];
    if (!part) continue;
    const other = {
      ...(options.silent ? { disable_notification: true } : {}),
      ...(options.replyTo !== null && index === 0 ? { reply_parameters: { message_id: options.replyTo, allow_sending_without_reply: true } } : {}),
    };
    const sent = await sendPart(part, (body, parseMode) => api.sendMessage(record.chatId, body, parseMode ? { ...other, parse_mode: parseMode } : other));
    ids.push(String(sent.message_id));
    await partSent(index + 1, parts.length);
  }
  return ids;
}

/**
 * A failed Bot API call as the ledger sees it: 429 (with `retry_after`) and 5xx answers are
 * retryable; every other answer is permanent (403 bot blocked, 400 chat not found, 401); no
 * answer is retryable when the connection could not be made and unknown otherwise (it may
 * have arrived); anything else (a fault of ours) is permanent.
 */
export function classifyTelegramFailure(error: unknown): DeliveryFailure {
  const reason = describeTelegramError(error);
  if (error instanceof GrammyError) {
    if (error.error_code === 429) {
      const wait = error.parameters.retry_after;
      return { kind: "retryable", reason, ...(wait === undefined ? {} : { retryAfterMs: wait * 1000 }) };
    }
    if (error.error_code >= 500) return { kind: "retryable", reason };
    return { kind: "permanent", reason };
  }
  if (error instanceof HttpError) return networkFailure(error.error, reason);
  return { kind: "permanent", reason: errorMessage(error) };
}

/**
 * Sends ledger records to Telegram through `api` (a client without retries): a reply as
 * ./outbound.ts plans it (`maxMessages` is `BUB_TELEGRAM_MAX_MESSAGES`), a `telegram.send`
 * message as the tool asked (format, silent, reply), answering its message ids.
 */
export function telegramSender(api: Api, maxMessages: () => number | undefined): DeliverySender {
  return {
    classify: classifyTelegramFailure,
    async send(record, partSent) {
      const tool = toolOptionsOf(record.options);
      if (tool) return sendToolParts(api, record, tool, partSent);
      const steps = replySteps(record.text, maxMessages());
      const where = `session_id=${record.sessionId} chat_id=${record.chatId}`;
      if (record.partsDone >= steps.length) return partSent(steps.length, steps.length);
      for (let index = record.partsDone; index < steps.length; index++) {
        const step = steps[index];
        if (step) await sendStep(api, record.chatId, step, where);
        await partSent(index + 1, steps.length);
      }
    },
  };
}
