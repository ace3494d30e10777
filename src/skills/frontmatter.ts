/**
 * SKILL.md frontmatter: parsing (a YAML mapping between the first two `---` lines) and the
 * Agent Skills validation rules, each failure explained in one phrase.
 */
import { parseYaml, YamlError } from "../config/yaml.ts";

/** Longest allowed skill name. */
export const MAX_SKILL_NAME_LENGTH = 64;
/** Longest allowed skill description. */
export const MAX_SKILL_DESCRIPTION_LENGTH = 1024;
/** Lowercase letters and digits in groups joined by single hyphens. */
export const SKILL_NAME_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** What parsing found: the keys (lowercased), or why there are none. */
export type FrontmatterResult = { readonly ok: true; readonly data: Record<string, unknown> } | { readonly ok: false; readonly problem: string };

/**
 * Parses the frontmatter of a SKILL.md (leading blank lines and surrounding whitespace
 * ignored). Malformed YAML is a problem naming the line and column in the file:
 * `frontmatter is not valid YAML: line 3, column 7: <what is wrong>`.
 */
export function parseFrontmatter(content: string): FrontmatterResult {
  const lines = content.trimEnd().split(/\r?\n/);
  const open = lines.findIndex((line) => line.trim() !== "");
  if (open < 0 || lines[open].trim() !== "---") {
    return { ok: false, problem: "no frontmatter: the file must start with a '---' line" };
  }
  const close = lines.findIndex((line, index) => index > open && line.trim() === "---");
  if (close < 0) return { ok: false, problem: "frontmatter is not closed: add a '---' line after it" };
  const text = lines.slice(open + 1, close).join("\n");
  let parsed: unknown;
  try {
    parsed = parseYaml(text, { file: "SKILL.md", firstLine: open + 2 });
  } catch (error) {
    if (!(error instanceof YamlError)) return { ok: false, problem: `frontmatter could not be parsed (${error instanceof Error ? error.message : String(error)})` };
    const where = error.line === null ? "" : `line ${error.line}${error.column === null ? "" : `, column ${error.column}`}: `;
    return { ok: false, problem: `frontmatter is not valid YAML: ${where}${error.problem}` };
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
