/** How the web view writes durations, money, token counts and dates. */

/** `1.2 s`, `340 ms`, `2 min 5 s`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** `$1.23`, `$0.0042`; `—` for an unknown amount. */
export function formatUsd(usd: number | null): string {
  if (usd === null) return "—";
  if (usd === 0) return "$0.00";
  return usd >= 0.1 ? `$${usd.toFixed(2)}` : `$${usd.toPrecision(2).replace(/0+$/, "").replace(/\.$/, "")}`;
}

/** `12,345`. */
export function formatCount(count: number): string {
  return count.toLocaleString("en");
}

/** A tape date as `2026-05-01 12:00:00 UTC`. */
export function shownDate(date: string): string {
  return date.replace("T", " ").replace(/\.\d+/, "").replace("+00:00", " UTC");
}
