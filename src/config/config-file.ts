import { dirname } from "node:path";
import { FileRefusedError, readBoundedTextFile, SETTINGS_FILE_MAX_BYTES } from "./bounded-file.ts";
import { isRecord } from "../kernel/guards.ts";
import { ConfigError, emptyConfigFile, type ConfigFile } from "./settings.ts";
import { errorCode, errorMessage } from "./thrown.ts";

/** What every `config.yml` problem message ends with. */
const FIX = "fix the file or run bub onboard";

/**
 * Reads `config.yml`. A missing or empty file is an empty config. Malformed YAML, or a top
 * level that is not a mapping, is a {@link ConfigError} whose message is one line:
 * `<file> line L, column C: <what is wrong> — fix the file or run bub onboard`. A file that is
 * not a regular file (a FIFO would block every command) or is larger than
 * {@link SETTINGS_FILE_MAX_BYTES} is a {@link ConfigError} saying so.
 */
export async function readConfigFile(path: string): Promise<ConfigFile> {
  let text: string;
  try {
    text = await readBoundedTextFile(path, { maxBytes: SETTINGS_FILE_MAX_BYTES, what: "config.yml" });
  } catch (error) {
    if (errorCode(error) === "ENOENT") return emptyConfigFile(path);
    if (error instanceof FileRefusedError) throw new ConfigError(error.message, { file: path });
    throw new ConfigError(`${path}: cannot read the file (${errorMessage(error)}) — check its permissions or run bub onboard`);
  }
  if (text.trim() === "") return emptyConfigFile(path);
  // The YAML parser loads only when there is YAML to parse.
  const { parseYamlDocument, YamlError } = await import("./yaml.ts");
  let parsed;
  try {
    parsed = parseYamlDocument(text, { file: path, fix: FIX });
  } catch (error) {
    if (error instanceof YamlError) throw new ConfigError(error.message, { file: error.file, line: error.line, column: error.column });
    throw error;
  }
  const data = parsed.value;
  if (data === null || data === undefined) return emptyConfigFile(path);
  if (!isRecord(data)) {
    const what = Array.isArray(data) ? "a list" : `a single ${typeof data} value`;
    throw new ConfigError(`${path} line 1, column 1: the file must be a YAML mapping of settings (key: value), not ${what} — ${FIX}`);
  }
  return { path, data, lineOf: (keyPath) => parsed.lineOf(keyPath) };
}

/** Writes `data` as YAML (key order kept), atomically: a temp file renamed over the old one. */
export async function writeConfigFile(path: string, data: Record<string, unknown>): Promise<void> {
  const [{ writeFile, rename }, { stringify }, { makeDirectoryAsync }] = await Promise.all([import("node:fs/promises"), import("yaml"), import("./home-dir.ts")]);
  await makeDirectoryAsync(dirname(path));
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, stringify(data), { mode: 0o600 });
  await rename(temp, path);
}
