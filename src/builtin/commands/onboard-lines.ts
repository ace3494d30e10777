/**
 * `bub onboard`'s questions over plain lines, for a stdin that is not a terminal: each
 * question is written to the output and answered by the next line of input, so the wizard
 * can be driven by a file or a pipe (`bub onboard < answers.txt`). The end of the input
 * before the last question cancels the wizard, as Ctrl-C does in a terminal.
 *
 * An empty line takes the question's default (shown in brackets); a select takes one of the
 * listed values or its number; a multiselect takes values separated by commas (`none` for
 * none); a yes/no question takes y, yes, n or no.
 */
import { createInterface } from "node:readline";
import type { OnboardPrompts, PromptOption } from "./onboard.ts";

const CANCEL = Symbol("onboard.cancel");

/** Line prompts over `input`, writing the questions to `output`; `close()` stops reading. */
export function linePrompts(input: NodeJS.ReadableStream, output: { write(text: string): unknown }): OnboardPrompts & { close(): void } {
  const reader = createInterface({ input, terminal: false });
  const lines = reader[Symbol.asyncIterator]();
  let ended = false;

  /** Asks `question` until `parse` accepts a line; the end of input cancels. */
  async function ask<T>(question: string, parse: (line: string) => T | undefined, help: string, shown: (value: T, line: string) => string = (_value, line) => line): Promise<T | symbol> {
    for (;;) {
      output.write(`${question} `);
      const next = ended ? { done: true as const, value: undefined } : await lines.next();
      if (next.done) {
        ended = true;
        output.write("\n");
        return CANCEL;
      }
      const line = next.value.trim();
      const value = parse(line);
      output.write(`${value === undefined ? line : shown(value, line)}\n`);
      if (value !== undefined) return value;
      output.write(`  ${help}\n`);
    }
  }

  const valueOf = (options: PromptOption[], text: string): string | undefined => {
    const index = /^\d+$/.test(text) ? Number(text) - 1 : -1;
    return options[index]?.value ?? options.find((option) => option.value.toLowerCase() === text.toLowerCase())?.value;
  };
  const listed = (options: PromptOption[]) => options.map((option) => option.value).join(", ");

  return {
    intro: (title) => void output.write(`${title}\n`),
    outro: () => undefined,
    cancel: (message) => void output.write(`${message}\n`),
    log: {
      info: (message) => void output.write(`${message}\n`),
      success: (message) => void output.write(`${message}\n`),
      error: (message) => void output.write(`${message}\n`),
    },
    select: ({ message, options, initialValue }) =>
      ask(
        `${message} (${listed(options)})${initialValue ? ` [${initialValue}]` : ""}:`,
        (line) => (line === "" ? initialValue : valueOf(options, line)),
        `choose one of: ${listed(options)}`,
        (value) => value,
      ),
    text: ({ message, defaultValue }) => ask(`${message}${defaultValue ? ` [${defaultValue}]` : ""}:`, (line) => (line === "" ? (defaultValue ?? "") : line), ""),
    password: ({ message }) => ask(`${message}:`, (line) => line, "", (value) => (value === "" ? "" : "********")),
    multiselect: ({ message, options, initialValues }) =>
      ask(
        `${message} (${listed(options)}, comma separated, or none)${initialValues?.length ? ` [${initialValues.join(",")}]` : ""}:`,
        (line) => {
          if (line === "") return initialValues ?? [];
          if (line.toLowerCase() === "none") return [];
          const chosen = line.split(/[\s,]+/).filter((item) => item !== "").map((item) => valueOf(options, item));
          return chosen.every((item) => item !== undefined) ? [...new Set(chosen)] : undefined;
        },
        `name channels from: ${listed(options)} (or none)`,
        (value) => (value.length > 0 ? value.join(",") : "none"),
      ),
    confirm: ({ message, initialValue }) =>
      ask(
        `${message} (y/n) [${initialValue ? "y" : "n"}]:`,
        (line) => (line === "" ? (initialValue ?? false) : /^(y|yes)$/i.test(line) ? true : /^(n|no)$/i.test(line) ? false : undefined),
        "answer y or n",
        (value) => (value ? "yes" : "no"),
      ),
    isCancel: (value: unknown): value is symbol => value === CANCEL,
    close: () => reader.close(),
  };
}
