import { epochMicros } from "../tape/date.ts";

let last = 0;

function pad(value: number, width: number): string {
  return String(value).padStart(width, "0");
}

/** `run-YYYYMMDDTHHMMSSffffffZ` for a UTC time given in microseconds since the epoch. */
export function formatRunId(epochMicros: number): string {
  const date = new Date(Math.floor(epochMicros / 1000));
  const fraction = ((epochMicros % 1_000_000) + 1_000_000) % 1_000_000;
  return (
    `run-${pad(date.getUTCFullYear(), 4)}${pad(date.getUTCMonth() + 1, 2)}${pad(date.getUTCDate(), 2)}` +
    `T${pad(date.getUTCHours(), 2)}${pad(date.getUTCMinutes(), 2)}${pad(date.getUTCSeconds(), 2)}${pad(fraction, 6)}Z`
  );
}

/**
 * A run id for now, `run-YYYYMMDDTHHMMSSffffffZ` (UTC, microseconds), as the reference
 * runtime writes them. Ids from one process strictly increase, so two steps never share one.
 *
 * ```ts
 * generateRunId(); // "run-20260102T030405123456Z"
 * ```
 */
export function generateRunId(): string {
  const now = epochMicros();
  last = now > last ? now : last + 1;
  return formatRunId(last);
}
