import { parseEnv } from "node:util";
import { refreshLogLevel } from "../kernel/log.ts";
import { readBoundedTextFile, SETTINGS_FILE_MAX_BYTES } from "./bounded-file.ts";
import { errorCode } from "./thrown.ts";

/**
 * Loads a `.env` file into `env` without overriding variables already set; a missing file is fine.
 * @throws FileRefusedError when it is not a regular file (a FIFO would block the start) or is
 *   larger than {@link SETTINGS_FILE_MAX_BYTES}; the read error of a file that exists but cannot be read
 *   is ignored, as before.
 */
export async function loadDotEnv(file: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  let text: string;
  try {
    text = await readBoundedTextFile(file, { maxBytes: SETTINGS_FILE_MAX_BYTES, what: "the .env file" });
  } catch (error) {
    if (typeof errorCode(error) === "string") return;
    throw error;
  }
  for (const [key, value] of Object.entries(parseEnv(text))) if (env[key] === undefined) env[key] = value;
  refreshLogLevel();
}
