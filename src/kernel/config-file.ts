import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { ConfigError, emptyConfigFile, type ConfigFile } from "./settings.ts";

/**
 * Reads `config.yml`. A missing or empty file is an empty config; malformed YAML or a
 * top level that is not a mapping is a {@link ConfigError} naming the file and line.
 * The YAML parser is imported only when there is a file to parse.
 */
export async function readConfigFile(path: string): Promise<ConfigFile> {
  let text: string;
  try {
    text = readFileSync(path, "utf8"); // sync: read once at startup, before anything else runs
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return emptyConfigFile(path);
    throw new ConfigError(`Cannot read config file ${path}: ${(error as Error).message}. Check its permissions.`);
  }
  if (text.trim() === "") return emptyConfigFile(path);
  const { parseDocument, LineCounter, isMap, isScalar } = await import("yaml");
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter });
  const problem = document.errors[0];
  if (problem) {
    const line = problem.linePos?.[0]?.line;
    throw new ConfigError(`Config file ${path}${line ? ` line ${line}` : ""} is not valid YAML: ${problem.message.split("\n")[0]}. Fix the file or run \`bub onboard\` to write a new one.`);
  }
  const data: unknown = document.toJS();
  if (data === null || data === undefined) return emptyConfigFile(path);
  if (typeof data !== "object" || Array.isArray(data)) {
    throw new ConfigError(`Config file ${path} must be a YAML mapping of settings (key: value), not ${Array.isArray(data) ? "a list" : typeof data}.`);
  }
  return {
    path,
    data: data as Record<string, unknown>,
    lineOf(keyPath) {
      let node: unknown = document.contents;
      let line: number | null = null;
      for (const key of keyPath) {
        if (!isMap(node)) return line;
        const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === String(key));
        if (!pair) return line;
        const start = isScalar(pair.key) ? pair.key.range?.[0] : undefined;
        if (start !== undefined) line = lineCounter.linePos(start).line;
        node = pair.value;
      }
      return line;
    },
  };
}

/** Writes `data` as YAML (key order kept), atomically: a temp file renamed over the old one. */
export async function writeConfigFile(path: string, data: Record<string, unknown>): Promise<void> {
  const [{ stringify }, { writeFile, mkdir, rename }] = await Promise.all([import("yaml"), import("node:fs/promises")]);
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, stringify(data), { mode: 0o600 });
  await rename(temp, path);
}
