/**
 * Text that came from a tape, a tool or a model, made safe to print for a person: control
 * characters other than newline and tab are shown as `\x1b`-style escapes instead of being
 * written, so an escape sequence in a tool's output (an OSC 52 clipboard write, a screen
 * clear, a cursor move that rewrites what was printed) is seen, not obeyed by the terminal.
 */

/**
 * C0 controls but `\n` and `\t` (a `\r` only when no `\n` follows: CRLF line ends stay as
 * they are), DEL and the C1 range (U+0080–U+009F: a terminal may read U+009B as CSI).
 */
const CONTROL = /\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/g;

/**
 * `text` with every control character (see above) written as `\xNN`:
 * `"\x1b]52;c;aGk=\x07"` becomes the visible `\x1b]52;c;aGk=\x07`. Text without one is
 * returned as it is.
 *
 * ```ts
 * escapeControlChars("ok\u001b[2J\n"); // "ok\\x1b[2J\n"
 * ```
 */
export function escapeControlChars(text: string): string {
  return text.replace(CONTROL, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, "0")}`);
}
