#!/usr/bin/env node
// Scaffolds and validates Agent Skills.
//   skill-tool.mjs init <name> [--path <dir>] [--description <text>]
//   skill-tool.mjs validate <skill-dir>
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { parse as parseYaml } from "yaml";

const NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const MAX_NAME = 64;
const MAX_DESCRIPTION = 1024;

/** Every problem of the skill in `dir` (empty when it is valid). */
export function validateSkill(dir) {
  const file = join(dir, "SKILL.md");
  if (!existsSync(file)) return [`${file}: missing (every skill needs a SKILL.md)`];
  const lines = readFileSync(file, "utf8").trim().split(/\r?\n/);
  if (lines[0]?.trim() !== "---") return [`${file}: no frontmatter: the file must start with a '---' line`];
  const close = lines.findIndex((line, index) => index > 0 && line.trim() === "---");
  if (close < 0) return [`${file}: frontmatter is not closed: add a '---' line after it`];
  let data;
  try {
    data = parseYaml(lines.slice(1, close).join("\n"));
  } catch (error) {
    return [`${file}: frontmatter is not valid YAML (${String(error.message).split("\n")[0]})`];
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) return [`${file}: frontmatter is not a YAML mapping of keys to values`];
  const fields = Object.fromEntries(Object.entries(data).map(([key, value]) => [key.toLowerCase(), value]));
  const problems = [];
  const folder = basename(resolve(dir));
  const name = fields.name;
  if (typeof name !== "string" || !name.trim()) problems.push("'name' is missing or not a string");
  else {
    const trimmed = name.trim();
    if (trimmed.length > MAX_NAME) problems.push(`'name' is longer than ${MAX_NAME} characters`);
    if (!NAME.test(trimmed)) problems.push(`'name' "${trimmed}" must be lowercase letters and digits joined by single hyphens`);
    if (trimmed !== folder) problems.push(`'name' "${trimmed}" does not match its directory name "${folder}"`);
  }
  const description = fields.description;
  if (typeof description !== "string" || !description.trim()) problems.push("'description' is missing, empty or not a string");
  else if (description.trim().length > MAX_DESCRIPTION) problems.push(`'description' is longer than ${MAX_DESCRIPTION} characters (${description.trim().length})`);
  const metadata = fields.metadata;
  if (metadata !== undefined && metadata !== null) {
    if (typeof metadata !== "object" || Array.isArray(metadata)) problems.push("'metadata' must be a mapping of strings to strings");
    else for (const [key, value] of Object.entries(metadata)) if (typeof value !== "string") problems.push(`'metadata.${key}' must be a string (quote it in the YAML)`);
  }
  if (!lines.slice(close + 1).join("\n").trim()) problems.push("the body is empty: write the instructions after the frontmatter");
  return problems.map((problem) => `${file}: ${problem}`);
}

/** Creates `<root>/<name>/SKILL.md` and `scripts/`; returns the SKILL.md path. */
export function initSkill(name, root, description) {
  if (!NAME.test(name) || name.length > MAX_NAME) {
    throw new Error(`invalid skill name "${name}": use at most ${MAX_NAME} lowercase letters and digits joined by single hyphens`);
  }
  const dir = resolve(root, name);
  if (existsSync(dir)) throw new Error(`${dir} already exists; choose another name or edit that skill`);
  mkdirSync(join(dir, "scripts"), { recursive: true });
  const summary = (description || `TODO: what ${name} does and when to use it.`).replace(/\s+/g, " ").trim();
  const title = name.split("-").map((word) => word[0].toUpperCase() + word.slice(1)).join(" ");
  const body = [
    "---",
    `name: ${name}`,
    `description: ${JSON.stringify(summary)}`,
    "---",
    "",
    `# ${title}`,
    "",
    "TODO: the steps, commands and pitfalls of this job. Keep it short.",
    "",
    "Scripts in `scripts/` run as `\"$NODE\" \"$SKILL_DIR/scripts/<file>.mjs\"`.",
    "",
  ].join("\n");
  const file = join(dir, "SKILL.md");
  writeFileSync(file, body);
  return file;
}

function main() {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { path: { type: "string", default: join(".agents", "skills") }, description: { type: "string" } },
  });
  const [command, target] = positionals;
  if (command === "init" && target) {
    const file = initSkill(target, values.path, values.description);
    process.stdout.write(`created ${file}\n`);
    return 0;
  }
  if (command === "validate" && target) {
    if (!existsSync(target) || !statSync(target).isDirectory()) {
      process.stderr.write(`${resolve(target)} is not a directory\n`);
      return 1;
    }
    const problems = validateSkill(target);
    if (problems.length === 0) {
      process.stdout.write(`valid: ${resolve(target, "SKILL.md")}\n`);
      return 0;
    }
    process.stderr.write(`${problems.join("\n")}\n`);
    return 1;
  }
  process.stderr.write("usage: skill-tool.mjs init <name> [--path <dir>] [--description <text>]\n       skill-tool.mjs validate <skill-dir>\n");
  return 2;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.exitCode = main();
  } catch (error) {
    process.stderr.write(`error: ${error.message}\n`);
    process.exitCode = 1;
  }
}
