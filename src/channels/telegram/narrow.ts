/**
 * Checks that turn plain values into grammY's types without casts: an update read from the
 * journal or a webhook body, a Node AbortSignal handed to a Bot API call, and the error a
 * handler threw out of the BotError grammY wraps it in.
 */
import type { Bot } from "grammy";
import type { Update } from "grammy/types";
import { isRecord } from "../../kernel/guards.ts";

/** The signal type grammY's calls take (on Node, the abort-controller polyfill's). */
export type ApiSignal = NonNullable<Parameters<Bot["init"]>[0]>;

/**
 * Whether `value` has the shape of a Telegram update: a non-negative integer `update_id`,
 * and every other field an object (a message, a callback query, ...). What is inside those
 * objects is left to grammY's filters and the channel's parsing.
 */
export function isUpdate(value: unknown): value is Update {
  if (!isRecord(value)) return false;
  if (typeof value.update_id !== "number" || !Number.isSafeInteger(value.update_id) || value.update_id < 0) return false;
  return Object.entries(value).every(([key, field]) => key === "update_id" || (typeof field === "object" && field !== null));
}

/** The error a bot handler threw, from what `bot.handleUpdate` rejects with: grammY wraps it in a BotError, whose `error` is the original. */
export function handlerError(error: unknown): unknown {
  return typeof error === "object" && error !== null && "error" in error ? error.error : error;
}

function hasSignalShape(signal: AbortSignal): signal is AbortSignal & ApiSignal {
  return typeof signal.aborted === "boolean" && typeof signal.addEventListener === "function" && typeof signal.removeEventListener === "function";
}

/**
 * `signal` as grammY's signal type. grammY reads only `aborted` and the abort event, which
 * a Node AbortSignal has; the polyfill's class type just does not say so.
 *
 * @throws TypeError when `signal` lacks them (not a real AbortSignal).
 */
export function apiSignal(signal: AbortSignal): ApiSignal {
  if (hasSignalShape(signal)) return signal;
  throw new TypeError("expected an AbortSignal");
}
