/**
 * One validation for every duration in seconds, settings (`model_timeout_seconds`,
 * `debounce_seconds`, ...) and tool arguments (`bash`'s `timeout_seconds`, `web.fetch`'s
 * `timeout`) alike: Node's timers take at most 2^31-1 ms, and a longer delay fires at once
 * (with a warning) or throws a RangeError, so a larger value is refused up front with a
 * message naming the value and the allowed range.
 */
import { z } from "zod";

/** The longest wait Node's timers accept, in whole seconds: floor((2^31 - 1) / 1000) = 2,147,483 s (about 24.8 days). */
export const MAX_DURATION_SECONDS = Math.floor(0x7fffffff / 1000);

export interface DurationOptions {
  /** Whole seconds only (tool arguments). Default false. */
  integer?: boolean;
  /** `0` allowed (a setting where 0 means "no wait" or "no limit"). Default false: the value must be above 0. */
  allowZero?: boolean;
}

/** What is allowed, in words: "a whole number of seconds from 1 to 2147483 (...)". */
export function durationRangeText(options: DurationOptions = {}): string {
  const unit = options.integer ? "a whole number of seconds" : "a number of seconds";
  const low = options.allowZero ? "from 0" : options.integer ? "from 1" : "greater than 0 and";
  return `${unit} ${low} ${options.allowZero || options.integer ? "to" : "at most"} ${MAX_DURATION_SECONDS} (the longest wait Node's timers allow, about 24.8 days)`;
}

/**
 * A zod number of seconds bounded by {@link MAX_DURATION_SECONDS}. A value outside the range
 * fails with `<value> is out of range: expected <range>`; the setting's or argument's name
 * comes with the issue's path (settings errors and tool validation errors both print it).
 *
 * ```ts
 * z.object({ timeout_seconds: durationSeconds({ integer: true }).default(30) });
 * ```
 */
export function durationSeconds(options: DurationOptions = {}): z.ZodNumber {
  const range = durationRangeText(options);
  const error = (issue: { input?: unknown }) => `${typeof issue.input === "number" ? issue.input : JSON.stringify(issue.input)} is out of range: expected ${range}`;
  let schema = z.number({ error: (issue) => (issue.input === undefined ? undefined : `expected ${range}`) });
  if (options.integer) schema = schema.int({ error: (issue) => `${String(issue.input)} is not a whole number: expected ${range}` });
  schema = options.allowZero ? schema.min(0, { error }) : options.integer ? schema.min(1, { error }) : schema.positive({ error });
  return schema.max(MAX_DURATION_SECONDS, { error });
}
