import { readFileSync } from "node:fs";
import { parseEnv } from "node:util";
import { refreshLogLevel } from "../kernel/log.ts";

/** Loads a `.env` file into `env` without overriding variables already set; a missing file is fine. */
export function loadDotEnv(file: string, env: NodeJS.ProcessEnv = process.env): void {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return;
  }
  for (const [key, value] of Object.entries(parseEnv(text))) if (env[key] === undefined) env[key] = value;
  refreshLogLevel();
}
