/** Telegram's limit on the text of one message, in UTF-16 code units. */
export const TELEGRAM_TEXT_LIMIT = 4096;

/** Never cut between the two halves of a surrogate pair (an emoji, say). */
function safeCut(text: string, at: number): number {
  const code = text.charCodeAt(at - 1);
  return code >= 0xd800 && code <= 0xdbff ? at - 1 : at;
}

/** Where to cut `text` (longer than `limit`) and which separator characters to drop after the cut. */
function cutPoint(text: string, limit: number): { at: number; separator: RegExp | null } {
  const paragraph = text.lastIndexOf("\n\n", limit);
  if (paragraph > 0) return { at: paragraph, separator: /^\n+/ };
  const line = text.lastIndexOf("\n", limit);
  if (line > 0) return { at: line, separator: /^\n/ };
  const space = Math.max(text.lastIndexOf(" ", limit), text.lastIndexOf("\t", limit));
  if (space > 0) return { at: space, separator: /^[ \t]+/ };
  return { at: safeCut(text, limit), separator: null };
}

/**
 * Splits a reply into messages Telegram accepts (≤ `limit` UTF-16 units each), cutting at
 * the last paragraph break that fits, else the last line break, else the last space — so a
 * word, link or mention is never cut. Only a run longer than the limit with no whitespace
 * at all is cut hard (never inside a surrogate pair).
 *
 * ```ts
 * splitMessage("a".repeat(3000) + "\n\n" + "b".repeat(3000)); // two messages
 * ```
 */
export function splitMessage(text: string, limit = TELEGRAM_TEXT_LIMIT): string[] {
  const parts: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    const { at, separator } = cutPoint(rest, limit);
    const head = rest.slice(0, at).trimEnd();
    if (head !== "") parts.push(head);
    rest = rest.slice(at);
    if (separator) rest = rest.replace(separator, "");
  }
  if (rest.trim() !== "") parts.push(rest);
  return parts;
}

/**
 * The opening of a long reply, at most `limit` UTF-16 units, cut like {@link splitMessage}
 * (paragraph, line, then word boundary); the text itself when it fits.
 */
export function previewOf(text: string, limit: number): string {
  return splitMessage(text.trim(), limit)[0] ?? "";
}
