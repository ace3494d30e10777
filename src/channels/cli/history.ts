/**
 * The REPL's input history: one file per workspace under `<BUB_HOME>/history/`, in the
 * format the reference runtime's prompt library writes (a `# <date>` comment, then the
 * entry's lines each prefixed with `+`), so both runtimes share it.
 */
import { createHash } from "node:crypto";
import { appendFile } from "node:fs/promises";
import { FileRefusedError, readBoundedTextFile } from "../../config/bounded-file.ts";
import { makeDirectoryAsync, PRIVATE_FILE_MODE } from "../../config/home-dir.ts";
import { dirname, join } from "node:path";
import { createLogger } from "../../kernel/log.ts";

const log = createLogger("bub:cli");

/** The most bytes of a history file read at start; a larger one (or a FIFO) is not loaded. */
export const HISTORY_MAX_BYTES = 16 * 1024 * 1024;

/** `<home>/history/<md5(workspace)>.history`. */
export function historyFile(home: string, workspace: string): string {
  return join(home, "history", `${createHash("md5").update(workspace).digest("hex")}.history`);
}

/** Parses a history file's text into entries, oldest first. */
export function parseHistory(text: string): string[] {
  const entries: string[] = [];
  let current: string[] | null = null;
  const flush = () => {
    if (current) entries.push(current.join("\n"));
    current = null;
  };
  for (const line of text.split(/\r?\n/)) {
    if (line.startsWith("+")) (current ??= []).push(line.slice(1));
    else flush();
  }
  flush();
  return entries;
}

/**
 * Reads the entries of a history file, oldest first; a missing file has none, and so has one
 * that is not a regular file or is over {@link HISTORY_MAX_BYTES} (with a warning saying so).
 */
export async function loadHistory(file: string): Promise<string[]> {
  try {
    return parseHistory(await readBoundedTextFile(file, { maxBytes: HISTORY_MAX_BYTES, what: "the chat history", tooLargeFix: "shorten it or move it away" }));
  } catch (error) {
    if (typeof error === "object" && error !== null && "code" in error && error.code === "ENOENT") return [];
    if (error instanceof FileRefusedError) {
      log.warn(`history.skipped ${error.message}`);
      return [];
    }
    throw error;
  }
}

function stamp(date: Date): string {
  const pad = (value: number, size = 2) => String(value).padStart(size, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds() * 1000, 6)}`;
}

/** Appends one entry (creating the folder and file on first use). */
export async function appendHistory(file: string, entry: string, date = new Date()): Promise<void> {
  await makeDirectoryAsync(dirname(file));
  const lines = entry.split("\n").map((line) => `+${line}`).join("\n");
  await appendFile(file, `\n# ${stamp(date)}\n${lines}\n`, { mode: PRIVATE_FILE_MODE });
}
