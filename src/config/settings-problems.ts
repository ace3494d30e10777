/**
 * Validation problems in plain words: zod's issues for a section become one line per
 * problem, naming where the value came from (variable, or key with file and line), the
 * value (hidden for secrets), and what the setting allows; all lines make one
 * {@link ConfigError}.
 */
import type { z } from "zod";
import { allowedText, childSchema, jsonSchemaOf, type JsonSchema } from "./allowed-text.ts";
import { ConfigError } from "./config-error.ts";
import { envVariable, type SettingsSchema, type SettingsSection } from "../kernel/settings-contract.ts";
import { isSecretPath } from "./redaction.ts";

/** Where a value came from, for error messages. */
export type Source = { kind: "env"; variable: string; raw: string } | { kind: "file"; file: string; line: number | null } | { kind: "default" };

/** One problem's line, and where it sorts: environment first, then the file by line, then missing keys. */
export type Problem = { readonly text: string; readonly rank: number };

/** Marks the messages zod made up itself (no message given in the schema). */
const DEFAULT_MESSAGE = "\u0000";
/** Issue codes whose problem is the value's type or range, which the schema describes. */
const DESCRIBED = new Set(["invalid_type", "too_small", "too_big", "invalid_value", "invalid_format", "invalid_union"]);

/** zod's issue in a few words, for when the schema cannot describe what it allows. */
function issueText(issue: z.core.$ZodRawIssue): string {
  switch (issue.code) {
    case "invalid_type":
      return `expected ${issue.expected}`;
    case "too_small":
      return `expected ${issue.origin ?? "a value"} ${issue.inclusive ? "of at least" : "greater than"} ${String(issue.minimum)}`;
    case "too_big":
      return `expected ${issue.origin ?? "a value"} ${issue.inclusive ? "of at most" : "less than"} ${String(issue.maximum)}`;
    case "invalid_value":
      return `expected one of ${(issue.values ?? []).map(String).join(", ")}`;
    case "invalid_format":
      return `expected the ${issue.format} format`;
    case "unrecognized_keys":
      return `has unknown keys: ${(issue.keys ?? []).join(", ")}`;
    case "invalid_union":
      return "matches none of the allowed forms";
    default:
      return "is not valid";
  }
}

/**
 * The error map to validate with (`schema.safeParse(values, { error: defaultIssueMessage })`):
 * zod's own messages are marked, so that {@link describeProblems} can replace them with what
 * the schema allows and keep the messages a schema gives.
 */
export function defaultIssueMessage(issue: z.core.$ZodRawIssue): string {
  return DEFAULT_MESSAGE + issueText(issue);
}

function isSecret(path: readonly PropertyKey[]): boolean {
  return isSecretPath(path);
}

/** A value as an error message shows it: JSON, cut to 60 characters. */
export function shown(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function shownEnv(raw: string): string {
  if (raw.trim() === "" || /\s/.test(raw)) return JSON.stringify(raw.length > 60 ? `${raw.slice(0, 57)}...` : raw);
  return raw.length > 60 ? `${raw.slice(0, 57)}...` : raw;
}

function valueAt(values: Record<string, unknown>, path: readonly PropertyKey[]): unknown {
  let current: unknown = values;
  for (const part of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = Reflect.get(current, part);
  }
  return current;
}

/**
 * One line per problem of a section that did not validate: where the value came from, the
 * value, and what is allowed. `file` is the config file a missing key should be set in.
 */
export function describeProblems(
  section: SettingsSection<unknown>,
  schema: SettingsSchema,
  issues: readonly z.core.$ZodIssue[],
  values: Record<string, unknown>,
  sources: ReadonlyMap<string, Source>,
  file: string,
): Problem[] {
  let json: JsonSchema | null | undefined;
  const byPath = new Map<string, { path: readonly PropertyKey[]; texts: string[] }>();
  for (const issue of issues) {
    const path = issue.path;
    let text = issue.message;
    if (text.startsWith(DEFAULT_MESSAGE)) {
      text = text.slice(DEFAULT_MESSAGE.length);
      if (DESCRIBED.has(issue.code)) {
        json ??= jsonSchemaOf(schema);
        const allowed = allowedText(path.reduce<JsonSchema | null>((node, key) => childSchema(node, key), json));
        if (allowed) text = `expected ${allowed}`;
      }
    }
    const dotted = path.map(String).join(".");
    const entry = byPath.get(dotted) ?? { path, texts: [] };
    if (!entry.texts.includes(text)) entry.texts.push(text);
    byPath.set(dotted, entry);
  }
  const lines: Problem[] = [];
  for (const { path, texts } of byPath.values()) {
    const key = String(path[0] ?? "");
    const source = sources.get(key) ?? { kind: "default" };
    const name = [section.section, ...path.map(String)].filter((part) => part !== null && part !== "").join(".");
    const value = valueAt(values, path);
    const secret = isSecret(path);
    const what = texts.join("; ");
    if (source.kind === "env") {
      const inner = path.length > 1 ? ` (at ${path.slice(1).map(String).join(".")})` : "";
      lines.push({ text: `${source.variable}=${secret ? "(hidden)" : shownEnv(source.raw)}${inner}: ${what}`, rank: 0 });
    } else if (value === undefined) {
      const variable = path.length === 1 ? `${envVariable(section, key)} or ` : "";
      lines.push({ text: `${name} is missing (set ${variable}${name} in ${file}): ${what}`, rank: 2e9 });
    } else {
      const where = source.kind === "file" ? ` (${source.file}${source.line ? ` line ${source.line}` : ""})` : "";
      lines.push({ text: `${name}: ${secret ? "(hidden)" : shown(value)}${where}: ${what}`, rank: source.kind === "file" ? (source.line ?? 1e9) : 1e9 });
    }
  }
  return lines;
}

/** The one error for every problem found, each on its own line. */
export function settingsError(problems: readonly string[]): ConfigError {
  if (problems.length === 1) return new ConfigError(`invalid setting ${problems[0]} — fix it, or remove it to use the default`, { issues: [...problems] });
  const list = problems.map((problem) => `\n  - ${problem}`).join("");
  return new ConfigError(`${problems.length} invalid settings — fix them, or remove them to use the defaults:${list}`, { issues: [...problems] });
}
