/**
 * The output a shell keeps: a byte-bounded buffer holding the first half of its bound (the
 * head) and the latest half (the tail), with a count of what was cut in between. Memory is
 * bounded as the output arrives; bytes are counted in UTF-8 and a cut never splits a
 * character.
 *
 * Offsets (for `bash.output`'s incremental reads) are UTF-16 positions in the whole output
 * as if nothing had been cut, so a poller's `next_offset` keeps its meaning once the tail
 * starts moving; a read that lands in the cut part gets a notice in its place.
 */

/** Default most bytes of one shell's output kept in memory (`bash_output_max_bytes`): 1 MiB. */
export const DEFAULT_SHELL_OUTPUT_MAX_BYTES = 1024 * 1024;

/** Pieces of the tail smaller than this are joined with the next one (few array entries). */
const MIN_PIECE_BYTES = 4096;

interface Piece {
  text: string;
  bytes: number;
}

/** What {@link BoundedOutput.read} returns. */
export interface OutputRead {
  /** The text from the offset on, with a notice where output was cut. */
  readonly text: string;
  /** The offset to pass next time to read only what is new. */
  readonly next: number;
}

function isContinuation(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

function countNewlines(text: string): number {
  let count = 0;
  for (let index = text.indexOf("\n"); index !== -1; index = text.indexOf("\n", index + 1)) count++;
  return count;
}

function countNewlineBytes(bytes: Buffer, end: number): number {
  let count = 0;
  for (let index = bytes.indexOf(0x0a); index !== -1 && index < end; index = bytes.indexOf(0x0a, index + 1)) count++;
  return count;
}

function plural(count: number, unit: string): string {
  return `${count.toLocaleString("en-US")} ${unit}${count === 1 ? "" : "s"}`;
}

/** Shell output bounded to `maxBytes` UTF-8 bytes: the first half and the last half are kept. */
export class BoundedOutput {
  /** The bound in bytes. */
  readonly maxBytes: number;
  readonly #headMax: number;
  readonly #tailMax: number;
  #head = "";
  #headBytes = 0;
  #headFull = false;
  #tail: Piece[] = [];
  #tailFirst = 0;
  #tailBytes = 0;
  #tailChars = 0;
  #cutBytes = 0;
  #cutChars = 0;
  #cutLines = 0;

  /** @param maxBytes a positive whole number of bytes. */
  constructor(maxBytes: number = DEFAULT_SHELL_OUTPUT_MAX_BYTES) {
    this.maxBytes = Number.isSafeInteger(maxBytes) && maxBytes > 0 ? maxBytes : DEFAULT_SHELL_OUTPUT_MAX_BYTES;
    this.#headMax = Math.floor(this.maxBytes / 2);
    this.#tailMax = this.maxBytes - this.#headMax;
  }

  /** UTF-8 bytes cut so far (neither in the head nor in the tail). */
  get cutBytes(): number {
    return this.#cutBytes;
  }

  /** UTF-8 bytes held now (at most {@link maxBytes}). */
  get keptBytes(): number {
    return this.#headBytes + this.#tailBytes;
  }

  /** Adds decoded text (whole characters) at the end. */
  push(text: string): void {
    if (!text) return;
    if (!this.#headFull) {
      const bytes = Buffer.byteLength(text);
      const room = this.#headMax - this.#headBytes;
      if (bytes <= room) {
        this.#head += text;
        this.#headBytes += bytes;
        return;
      }
      const encoded = Buffer.from(text);
      let cut = room;
      while (cut > 0 && isContinuation(encoded[cut])) cut--;
      this.#head += encoded.toString("utf8", 0, cut);
      this.#headBytes += cut;
      this.#headFull = true;
      text = encoded.toString("utf8", cut);
    }
    this.#pushTail(text);
  }

  #pushTail(text: string): void {
    const bytes = Buffer.byteLength(text);
    const last = this.#tail.length > this.#tailFirst ? this.#tail[this.#tail.length - 1] : undefined;
    if (last && last.bytes < MIN_PIECE_BYTES) {
      last.text += text;
      last.bytes += bytes;
    } else {
      this.#tail.push({ text, bytes });
    }
    this.#tailBytes += bytes;
    this.#tailChars += text.length;
    while (this.#tailBytes > this.#tailMax) {
      const first = this.#tail[this.#tailFirst];
      if (!first) break;
      if (this.#tailBytes - first.bytes >= this.#tailMax) {
        this.#cut(first.bytes, first.text.length, countNewlines(first.text));
        this.#tail[this.#tailFirst++] = { text: "", bytes: 0 };
        continue;
      }
      // Cut the front of the first piece, moving forward to a character's first byte.
      const encoded = Buffer.from(first.text);
      let cut = this.#tailBytes - this.#tailMax;
      while (cut < encoded.length && isContinuation(encoded[cut])) cut++;
      const rest = encoded.toString("utf8", cut);
      this.#cut(cut, first.text.length - rest.length, countNewlineBytes(encoded, cut));
      first.text = rest;
      first.bytes -= cut;
      break;
    }
    if (this.#tailFirst > 64 && this.#tailFirst * 2 > this.#tail.length) {
      this.#tail = this.#tail.slice(this.#tailFirst);
      this.#tailFirst = 0;
    }
  }

  #cut(bytes: number, chars: number, lines: number): void {
    this.#cutBytes += bytes;
    this.#cutChars += chars;
    this.#cutLines += lines;
    this.#tailBytes -= bytes;
    this.#tailChars -= chars;
  }

  #tailText(): string {
    let text = "";
    for (let index = this.#tailFirst; index < this.#tail.length; index++) text += this.#tail[index]?.text ?? "";
    return text;
  }

  /** The notice standing for everything cut (bytes and lines), or for what a read skips from a later offset. */
  #notice(from: number): string {
    const skipped = this.#head.length + this.#cutChars - from;
    const what = from <= this.#head.length
      ? `${plural(this.#cutBytes, "byte")} (${plural(this.#cutLines, "line break")}) of output cut here`
      : `${plural(skipped, "character")} of output cut here`;
    return `\n[... ${what}: only the first ${plural(this.#headMax, "byte")} and the last ${plural(this.#tailMax, "byte")} are kept (bash_output_max_bytes) ...]\n`;
  }

  /** The whole kept output: the head, a notice of what was cut when anything was, the tail. */
  text(): string {
    return this.#cutBytes > 0 ? `${this.#head}${this.#notice(0)}${this.#tailText()}` : this.#head + this.#tailText();
  }

  /**
   * The output from `offset` (a UTF-16 position in the whole output, cut parts included), at
   * most `limit` characters of it (default all); a notice stands in for cut output.
   */
  read(offset: number, limit?: number | null): OutputRead {
    const headEnd = this.#head.length;
    const tailStart = headEnd + this.#cutChars;
    const total = tailStart + this.#tailChars;
    let position = Math.max(0, Math.min(Number.isFinite(offset) ? Math.trunc(offset) : 0, total));
    let remaining = limit === null || limit === undefined ? Infinity : Math.max(0, limit);
    let text = "";
    if (position < headEnd && remaining > 0) {
      const taken = this.#head.slice(position, Math.min(headEnd, position + remaining));
      text += taken;
      position += taken.length;
      remaining -= taken.length;
    }
    if (position >= headEnd && position < tailStart && remaining > 0) {
      text += this.#notice(position);
      position = tailStart;
    }
    if (position >= tailStart && remaining > 0) {
      const from = position - tailStart;
      const taken = this.#tailText().slice(from, from + Math.min(remaining, total - position));
      text += taken;
      position += taken.length;
    }
    return { text, next: position };
  }
}
