/**
 * SKILL.md frontmatter: parsing (a YAML mapping between the first two `---` lines) and the
 * Agent Skills validation rules, each failure explained in one phrase.
 */
import { createRequire } from "node:module";
import { parseSimpleYaml } from "./simple-yaml.ts";

/**
 * The `yaml` package, loaded on first use only: frontmatter beyond {@link parseSimpleYaml} and
 * structured config values in skill bodies are rare, and loading it costs every start ~7 ms.
 */
export function yamlPackage(): typeof import("yaml") {
  return createRequire(import.meta.url)("yaml") as typeof import("yaml");
}

/** Longest allowed skill name. */
export const MAX_SKILL_NAME_LENGTH = 64;
/** Longest allowed skill description. */
export const MAX_SKILL_DESCRIPTION_LENGTH = 1024;
/** Lowercase letters and digits in groups joined by single hyphens. */
export const SKILL_NAME_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** What parsing found: the keys (lowercased), or why there are none. */
export type FrontmatterResult = { readonly ok: true; readonly data: Record<string, unknown> } | { readonly ok: false; readonly problem: string };

/** Parses the frontmatter of a SKILL.md (leading and trailing whitespace ignored). */
export function parseFrontmatter(content: string): FrontmatterResult {
  const lines = content.trim().split(/\r?\n/);
  if (lines.length === 0 || lines[0]!.trim() !== "---") {
    return { ok: false, problem: "no frontmatter: the file must start with a '---' line" };
  }
  const close = lines.findIndex((line, index) => index > 0 && line.trim() === "---");
  if (close < 0) return { ok: false, problem: "frontmatter is not closed: add a '---' line after it" };
  const text = lines.slice(1, close).join("\n");
  let parsed: unknown = parseSimpleYaml(text);
  if (parsed === undefined) {
    try {
      parsed = yamlPackage().parse(text);
    } catch (error) {
      const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
      return { ok: false, problem: `frontmatter is not valid YAML (${message})` };
    }
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return { ok: false, problem: "frontmatter is not a YAML mapping of keys to values" };
  }
  const data: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(parsed)) data[key.toLowerCase()] = value;
  return { ok: true, data };
}

/** Why a skill's frontmatter is invalid for the directory `dirName`, or null when it is valid. */
export function frontmatterProblem(dirName: string, data: Record<string, unknown>): string | null {
  const name = data.name;
  if (name === undefined || name === null) return "'name' is missing";
  if (typeof name !== "string") return "'name' must be a string";
  const trimmed = name.trim();
  if (!trimmed) return "'name' is empty";
  if (trimmed.length > MAX_SKILL_NAME_LENGTH) return `'name' is longer than ${MAX_SKILL_NAME_LENGTH} characters`;
  if (!SKILL_NAME_PATTERN.test(trimmed)) return `'name' ${JSON.stringify(trimmed)} must be lowercase letters and digits joined by single hyphens`;
  if (trimmed !== dirName) return `'name' ${JSON.stringify(trimmed)} does not match its directory name ${JSON.stringify(dirName)}`;
  const description = data.description;
  if (description === undefined || description === null) return "'description' is missing";
  if (typeof description !== "string") return "'description' must be a string";
  if (!description.trim()) return "'description' is empty";
  if (description.trim().length > MAX_SKILL_DESCRIPTION_LENGTH) {
    return `'description' is longer than ${MAX_SKILL_DESCRIPTION_LENGTH} characters (${description.trim().length})`;
  }
  const metadata = data.metadata;
  if (metadata !== undefined && metadata !== null) {
    if (typeof metadata !== "object" || Array.isArray(metadata)) return "'metadata' must be a mapping of strings to strings";
    for (const [key, value] of Object.entries(metadata)) {
      if (typeof value !== "string") return `'metadata.${key}' must be a string (quote it in the YAML)`;
    }
  }
  return null;
}

/** The body of a SKILL.md: the content after the first frontmatter block, trimmed. */
export function stripFrontmatter(content: string): string {
  const trimmed = content.trim();
  const match = /^---[^\S\n]*\r?\n[\s\S]*?\r?\n---[^\S\n]*(\r?\n|$)/.exec(trimmed);
  return (match ? trimmed.slice(match[0].length) : trimmed).trim();
}
