/**
 * Skill bodies and the `<available_skills>` prompt block.
 *
 * Body rendering: `${config.a.b}` becomes the configured value (missing: empty, a departure
 * from the reference, spec §15.33; a secret: `[redacted:a.b]`), then `$SKILL_DIR` / `${SKILL_DIR}` the skill's directory
 * and `$NODE` / `${NODE}` the running Node binary. Other `$names` — and `$$` — are left alone.
 */
import { dirname } from "node:path";
import { readSkillFile, skillMaxBytes, type Skill } from "./discovery.ts";
import { stringify } from "yaml";
import { stripFrontmatter } from "./frontmatter.ts";
import { isSecretPath, redactionMarker, redactSecrets } from "../config/redaction.ts";

/** Looks up a configured value by dotted path (`telegram.token`); undefined when missing. */
export type ConfigLookup = (path: string) => unknown;

const CONFIG_TEMPLATE = /\$\{\s*config\.([A-Za-z0-9_.-]+)\s*\}/g;
const VARIABLE = /\$(?:\{(SKILL_DIR|NODE)\}|(SKILL_DIR|NODE)(?![A-Za-z0-9_]))/g;
/** `$name` mentions in a prompt (the reference's hint pattern). */
const HINT = /\$([A-Za-z0-9_.-]+)/g;

function configText(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  return stringify(value).trim();
}

/**
 * Replaces each `${config.x.y}` with the configured value (missing → ""). A path that names a
 * secret (`telegram.token`, `api_key`, ...) and is set renders as `[redacted:<path>]`, and a known
 * secret inside any other value is redacted too: skill bodies go to the model and the tape.
 */
export function renderConfigTemplates(text: string, config: ConfigLookup | null | undefined): string {
  return text.replace(CONFIG_TEMPLATE, (_match, path: string) => {
    let value: unknown;
    try {
      value = config?.(path);
    } catch {
      value = undefined;
    }
    const text = configText(value);
    return text !== "" && isSecretPath(path) ? redactionMarker(path) : redactSecrets(text);
  });
}

/** Replaces `$SKILL_DIR`/`${SKILL_DIR}` and `$NODE`/`${NODE}`; other `$` text is untouched. */
export function substituteSkillVariables(text: string, skillDir: string): string {
  return text.replace(VARIABLE, (_match, braced: string | undefined, bare: string | undefined) =>
    (braced ?? bare) === "SKILL_DIR" ? skillDir : process.execPath,
  );
}

/**
 * A skill's body, rendered: from the text discovery read when the skill carries it, else read
 * now ("" when the file cannot be read). A SKILL.md that has grown past `maxBytes` (default
 * `BUB_SKILL_MAX_BYTES`'s, 256 KiB) since it was discovered is not read whole: one line says
 * so instead of its body.
 */
export async function renderSkillBody(skill: Pick<Skill, "location" | "content">, options: { config?: ConfigLookup | null; maxBytes?: number } = {}): Promise<string> {
  const maxBytes = skillMaxBytes(options.maxBytes);
  let content: string | null;
  try {
    content = skill.content !== undefined && Buffer.byteLength(skill.content) <= maxBytes ? skill.content : await readSkillFile(skill.location, maxBytes);
  } catch {
    return "";
  }
  if (content === null) return `(${skill.location} is larger than ${maxBytes} bytes, the limit BUB_SKILL_MAX_BYTES sets: its instructions are not loaded)`;
  return substituteSkillVariables(renderConfigTemplates(stripFrontmatter(content), options.config), dirname(skill.location));
}

/** The casefolded names mentioned as `$name` in a prompt. */
export function skillHints(prompt: string): Set<string> {
  const names = new Set<string>();
  for (const match of prompt.matchAll(HINT)) names.add(match[1].toLowerCase());
  return names;
}

/** {@link CONFIG_TEMPLATE} anywhere in a text (its value may change between turns); no `g`, so `test` keeps no state. */
const HAS_CONFIG_TEMPLATE = new RegExp(CONFIG_TEMPLATE.source);
/** Most blocks kept per discovery result (one per set of expanded skills and limit). */
const MAX_BLOCKS_PER_RESULT = 16;
/** Blocks rendered from a discovery result, by the expanded skills and the byte limit. */
const renderedBlocks = new WeakMap<readonly Skill[], Map<string, string>>();

/**
 * The `<available_skills>` block: one `- name: description` line per skill; a skill whose
 * (casefolded) name is in `expanded` also gets its location and rendered body (the bodies
 * are read in parallel). "" when there are no skills.
 *
 * A block is kept against the `skills` array it came from (discovery answers the same array
 * while the skills do not change), unless a body it expands uses a `${config.…}` template or
 * had to be read from the disk: a turn that mentions the same skills as an earlier one gets
 * the same text without rendering it again.
 */
export async function renderSkillsPrompt(
  skills: readonly Skill[],
  options: { expanded?: Iterable<string>; config?: ConfigLookup | null; maxBytes?: number } = {},
): Promise<string> {
  if (skills.length === 0) return "";
  const expanded = new Set([...(options.expanded ?? [])].map((name) => name.toLowerCase()));
  const shown = skills.filter((skill) => expanded.has(skill.name.toLowerCase()));
  const maxBytes = skillMaxBytes(options.maxBytes);
  const key = `${maxBytes}\0${shown.map((skill) => skill.location).join("\0")}`;
  let blocks = renderedBlocks.get(skills);
  const kept = blocks?.get(key);
  if (kept !== undefined) return kept;
  const lines = await Promise.all(
    skills.map(async (skill) => {
      let line = `- ${skill.name}: ${skill.description}`;
      if (shown.includes(skill)) {
        line += `\n  Location: ${skill.location}`;
        const body = await renderSkillBody(skill, options);
        if (body) line += `\n${body}`;
      }
      return line;
    }),
  );
  const block = ["<available_skills>", ...lines, "</available_skills>"].join("\n");
  if (shown.every((skill) => skill.content !== undefined && Buffer.byteLength(skill.content) <= maxBytes && !HAS_CONFIG_TEMPLATE.test(skill.content))) {
    if (!blocks || blocks.size >= MAX_BLOCKS_PER_RESULT) renderedBlocks.set(skills, (blocks = new Map()));
    blocks.set(key, block);
  }
  return block;
}

/** Keeps the skills whose names are allowed (casefolded); null allows every skill (the same array). */
export function filterAllowedSkills(skills: readonly Skill[], allowed: Iterable<string> | null | undefined): readonly Skill[] {
  if (allowed === null || allowed === undefined) return skills;
  const names = new Set([...allowed].map((name) => name.trim().toLowerCase()));
  return skills.filter((skill) => names.has(skill.name.toLowerCase()));
}
