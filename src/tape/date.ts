/**
 * Dates on tapes: UTC ISO-8601 with microseconds and `+00:00`, the reference runtime's
 * format (`2026-01-02T03:04:05.123456+00:00`), and a parser for query bounds that accepts
 * what Python's `datetime.fromisoformat` accepts in practice.
 */

let lastEpochMicros = 0;

/**
 * Microseconds since the Unix epoch, from the wall clock (`Date.now()`), and never earlier
 * than the last value this function returned in this process: if the system clock is set
 * back, the time stands still until the wall clock catches up.
 */
export function epochMicros(): number {
  lastEpochMicros = Math.max(lastEpochMicros, Date.now() * 1000);
  return lastEpochMicros;
}

const MICROS_PER_SECOND = 1_000_000;
const MICROS_PER_DAY = 86_400 * MICROS_PER_SECOND;

function pad(value: number, width: number): string {
  return String(value).padStart(width, "0");
}

/** Formats microseconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SS.ffffff+00:00`. */
export function formatUtcDate(epochMicros: number): string {
  const whole = Math.floor(epochMicros);
  const millis = Math.floor(whole / 1000);
  const micros = whole - millis * 1000;
  const date = new Date(millis);
  const fraction = date.getUTCMilliseconds() * 1000 + micros;
  return (
    `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1, 2)}-${pad(date.getUTCDate(), 2)}` +
    `T${pad(date.getUTCHours(), 2)}:${pad(date.getUTCMinutes(), 2)}:${pad(date.getUTCSeconds(), 2)}` +
    `.${pad(fraction, 6)}+00:00`
  );
}

/** The current time in the tape date format; never earlier than a date this process stamped before. */
export function utcNow(): string {
  return formatUtcDate(epochMicros());
}

/** Converts a legacy `timestamp` (epoch seconds, possibly fractional) to the tape date format. */
export function dateFromEpochSeconds(seconds: number): string {
  return formatUtcDate(Math.round(seconds * MICROS_PER_SECOND));
}

/** `YYYYMMDDTHHMMSSZ` in UTC, as used in archive file names. */
export function archiveStamp(at: Date = new Date()): string {
  return (
    `${pad(at.getUTCFullYear(), 4)}${pad(at.getUTCMonth() + 1, 2)}${pad(at.getUTCDate(), 2)}` +
    `T${pad(at.getUTCHours(), 2)}${pad(at.getUTCMinutes(), 2)}${pad(at.getUTCSeconds(), 2)}Z`
  );
}

const DATE_ONLY = /^(\d{4})-?(\d{2})-?(\d{2})$/;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2})(?::?(\d{2})(?::?(\d{2})(?:[.,](\d+))?)?)?(Z|z|[+-]\d{2}(?::?\d{2}(?::?\d{2}(?:\.\d{1,6})?)?)?)?$/;

/** Days in `month` (1-12) of `year`. */
function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeap(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function dayMicros(year: number, month: number, day: number): number | null {
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getTime() * 1000;
}

function offsetMicros(text: string | undefined): number | null {
  if (!text || text === "Z" || text === "z") return 0;
  const sign = text[0] === "-" ? -1 : 1;
  const digits = text.slice(1).replace(/:/g, "");
  const [secondsPart = "", fractionPart = ""] = digits.split(".");
  const hours = Number(secondsPart.slice(0, 2));
  const minutes = Number(secondsPart.slice(2, 4) || "0");
  const seconds = Number(secondsPart.slice(4, 6) || "0");
  if (hours > 23 || minutes > 59 || seconds > 59) return null;
  const fraction = Number(fractionPart.padEnd(6, "0").slice(0, 6));
  return sign * ((hours * 3600 + minutes * 60 + seconds) * MICROS_PER_SECOND + fraction);
}

/**
 * Parses an ISO date or datetime into microseconds since the epoch (UTC).
 * A date without a time stands for the whole UTC day: its first microsecond when
 * `bound` is `"start"`, its last when `"end"`. A datetime without an offset is UTC.
 * Returns `null` when the text is not an ISO date or datetime.
 */
export function parseIsoDate(value: string, bound: "start" | "end" = "start"): number | null {
  const text = value.trim();
  const dateOnly = DATE_ONLY.exec(text);
  if (dateOnly) {
    const start = dayMicros(Number(dateOnly[1]), Number(dateOnly[2]), Number(dateOnly[3]));
    if (start === null) return null;
    return bound === "end" ? start + MICROS_PER_DAY - 1 : start;
  }
  const match = DATE_TIME.exec(text);
  if (!match) return null;
  const day = dayMicros(Number(match[1]), Number(match[2]), Number(match[3]));
  const hours = Number(match[4]);
  const minutes = Number(match[5] ?? "0");
  const seconds = Number(match[6] ?? "0");
  const offset = offsetMicros(match[8]);
  if (day === null || offset === null || hours > 23 || minutes > 59 || seconds > 59) return null;
  const fraction = Number((match[7] ?? "").padEnd(6, "0").slice(0, 6));
  return day + (hours * 3600 + minutes * 60 + seconds) * MICROS_PER_SECOND + fraction - offset;
}
