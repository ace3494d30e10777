/** Shell-style word splitting (POSIX rules, as Python's `shlex.split`). */
import { BubError } from "../kernel/errors.ts";

const WHITESPACE = /\s/;
/** Characters a backslash escapes inside double quotes. */
const DOUBLE_QUOTE_ESCAPES = new Set(["\\", '"', "$", "`", "\n"]);

/**
 * Splits a command line into words: whitespace separates, single quotes keep text literally,
 * double quotes keep text but let `\` escape `\ " $` and backquote, a backslash outside
 * quotes escapes the next character.
 *
 * ```ts
 * splitShellWords(`fs.write path=a.txt content='hello world'`); // ["fs.write", "path=a.txt", "content=hello world"]
 * ```
 *
 * @throws BubError `invalid_input` for an unclosed quote or a trailing backslash.
 */
export function splitShellWords(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | null = null;
  for (let index = 0; index < line.length; index++) {
    const char = line[index];
    if (quote === "'") {
      if (char === "'") quote = null;
      else word += char;
      continue;
    }
    if (quote === '"') {
      if (char === '"') quote = null;
      else if (char === "\\" && index + 1 < line.length && DOUBLE_QUOTE_ESCAPES.has(line[index + 1])) word += line[++index];
      else word += char;
      continue;
    }
    if (char === "'" || char === '"') {
      quote = char;
      inWord = true;
    } else if (char === "\\") {
      if (index + 1 >= line.length) throw new BubError("invalid_input", "No escaped character: the command ends with a backslash");
      word += line[++index];
      inWord = true;
    } else if (WHITESPACE.test(char)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += char;
      inWord = true;
    }
  }
  if (quote) throw new BubError("invalid_input", `No closing quotation: a ${quote === "'" ? "single" : "double"} quote is not closed`);
  if (inWord) words.push(word);
  return words;
}
