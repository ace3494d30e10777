/**
 * Counting and cutting text by code points (Python's `len` and slicing), so thresholds and
 * previews match the reference runtime even for emoji and other astral characters.
 */

function isHigh(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLow(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** The number of code points in `text`. */
export function codePointLength(text: string): number {
  let pairs = 0;
  for (let index = 0; index < text.length - 1; index++) {
    if (isHigh(text.charCodeAt(index)) && isLow(text.charCodeAt(index + 1))) {
      pairs++;
      index++;
    }
  }
  return text.length - pairs;
}

/** The first `count` code points of `text`. */
export function headCodePoints(text: string, count: number): string {
  let index = 0;
  for (let taken = 0; taken < count && index < text.length; taken++) {
    index += isHigh(text.charCodeAt(index)) && isLow(text.charCodeAt(index + 1)) ? 2 : 1;
  }
  return text.slice(0, index);
}

/** The last `count` code points of `text`. */
export function tailCodePoints(text: string, count: number): string {
  let index = text.length;
  for (let taken = 0; taken < count && index > 0; taken++) {
    index -= index >= 2 && isLow(text.charCodeAt(index - 1)) && isHigh(text.charCodeAt(index - 2)) ? 2 : 1;
  }
  return text.slice(index);
}

/** Splits UTF-8 bytes into chunks of at most `maxBytes` without cutting a character in two. */
export function utf8Chunks(bytes: Buffer, maxBytes: number): string[] {
  const chunks: string[] = [];
  let start = 0;
  while (start < bytes.length) {
    let end = Math.min(start + maxBytes, bytes.length);
    while (end < bytes.length && end > start && (bytes[end] & 0xc0) === 0x80) end--;
    if (end === start) end = Math.min(start + maxBytes, bytes.length);
    chunks.push(bytes.toString("utf8", start, end));
    start = end;
  }
  return chunks;
}
