/**
 * Skill discovery: the project, legacy project, global and bundled skill roots, in that order
 * of precedence. Invalid skills are skipped with a warning that names the file and the
 * problem (the reference skips them silently). Parsed files are cached by modification time
 * and size, so discovering on every model step costs a few `stat` calls.
 */
import { closeSync, openSync, readdirSync, readSync, statSync, type Stats } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createLogger } from "../kernel/log.ts";
import { withThousands } from "../tape/python-format.ts";
import { frontmatterProblem, parseFrontmatter } from "./frontmatter.ts";

const log = createLogger("bub:skills");

/** Skills of a workspace, relative to it. */
export const PROJECT_SKILLS_DIR = ".agents/skills";
/** The old location of project skills; still read, with a deprecation warning. */
export const LEGACY_SKILLS_DIR = ".agent/skills";
/** The file that makes a directory a skill. */
export const SKILL_FILE_NAME = "SKILL.md";

/** Default most bytes of a SKILL.md (`BUB_SKILL_MAX_BYTES`): a larger one is skipped, never sent to the model or the tape. */
export const DEFAULT_SKILL_MAX_BYTES = 256 * 1024;

/** A configured `skill_max_bytes`, or the default when it is not a positive whole number. */
export function skillMaxBytes(value: unknown): number {
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : DEFAULT_SKILL_MAX_BYTES;
}

/**
 * The text of a SKILL.md, reading at most `maxBytes` of it; `null` (and one warning naming
 * the file and its size) when it is larger.
 * @throws the read error of a file that cannot be read.
 */
export function readSkillFile(file: string, maxBytes: number): string | null {
  const fd = openSync(file, "r");
  try {
    const buffer = Buffer.allocUnsafe(maxBytes + 1);
    let filled = 0;
    while (filled < buffer.length) {
      const read = readSync(fd, buffer, filled, buffer.length - filled, filled);
      if (read === 0) break;
      filled += read;
    }
    if (filled > maxBytes) {
      warnTooLarge(file, Math.max(filled, statOrNull(file)?.size ?? 0), maxBytes);
      return null;
    }
    return buffer.toString("utf8", 0, filled);
  } finally {
    closeSync(fd);
  }
}

function warnTooLarge(file: string, size: number, maxBytes: number): void {
  log.warn(
    `skill.too_large path=${file} problem=SKILL.md is ${withThousands(size)} bytes, more than ${withThousands(maxBytes)} (BUB_SKILL_MAX_BYTES): the skill is skipped and its body never sent`,
  );
}

/** Where a skill was found. */
export type SkillSource = "project" | "global" | "builtin";

/** A discovered, valid skill. */
export interface Skill {
  readonly name: string;
  readonly description: string;
  /** Absolute path of its SKILL.md. */
  readonly location: string;
  readonly source: SkillSource;
  /** Every frontmatter key (lowercased) with its value. */
  readonly metadata: Readonly<Record<string, unknown>>;
}

/** Options of {@link discoverSkills}. */
export interface SkillDiscoveryOptions {
  /** Home directory whose `.agents/skills` holds global skills; default `os.homedir()`. */
  homeDir?: string | null;
  /** The bundled skills directory; default the package's `skills/`; null: none. */
  bundledDir?: string | null;
  /** A SKILL.md larger than this is skipped with a warning; default {@link DEFAULT_SKILL_MAX_BYTES}. */
  maxBytes?: number;
}

/** The package's bundled `skills/` directory (two levels above this module in both src/ and dist/). */
export function bundledSkillsDir(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "skills");
}

interface CachedFile {
  readonly mtimeMs: number;
  readonly size: number;
  readonly maxBytes: number;
  readonly skill: Omit<Skill, "source"> | null;
}

const fileCache = new Map<string, CachedFile>();
const warnedLegacy = new Set<string>();

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

function readSkill(skillDir: string, maxBytes: number): Omit<Skill, "source"> | null {
  const file = join(skillDir, SKILL_FILE_NAME);
  const info = statOrNull(file);
  if (!info || !info.isFile()) return null;
  const cached = fileCache.get(file);
  if (cached && cached.mtimeMs === info.mtimeMs && cached.size === info.size && cached.maxBytes === maxBytes) return cached.skill;
  let skill: Omit<Skill, "source"> | null;
  if (info.size > maxBytes) {
    // Warned once per change of the file: the result is cached like a parse.
    warnTooLarge(file, info.size, maxBytes);
    skill = null;
  } else {
    skill = parseSkill(file, basename(skillDir), maxBytes);
  }
  fileCache.set(file, { mtimeMs: info.mtimeMs, size: info.size, maxBytes, skill });
  return skill;
}

function parseSkill(file: string, dirName: string, maxBytes: number): Omit<Skill, "source"> | null {
  let content: string | null;
  try {
    content = readSkillFile(file, maxBytes);
  } catch (error) {
    log.warn(`skill.invalid path=${file} problem=cannot read the file (${(error as Error).message})`);
    return null;
  }
  if (content === null) return null;
  const parsed = parseFrontmatter(content);
  const problem = parsed.ok ? frontmatterProblem(dirName, parsed.data) : parsed.problem;
  if (!parsed.ok || problem) {
    log.warn(`skill.invalid path=${file} problem=${problem}`);
    return null;
  }
  return {
    name: String(parsed.data.name).trim(),
    description: String(parsed.data.description).trim(),
    location: resolve(file),
    metadata: Object.freeze({ ...parsed.data }),
  };
}

function skillRoots(workspace: string, options: SkillDiscoveryOptions): { root: string; source: SkillSource }[] {
  const roots: { root: string; source: SkillSource }[] = [{ root: join(workspace, PROJECT_SKILLS_DIR), source: "project" }];
  const legacy = join(workspace, LEGACY_SKILLS_DIR);
  if (statOrNull(legacy)?.isDirectory()) {
    if (!warnedLegacy.has(legacy)) {
      warnedLegacy.add(legacy);
      log.warn(`skill.legacy_dir path=${legacy}: move these skills to ${join(workspace, PROJECT_SKILLS_DIR)}; '${LEGACY_SKILLS_DIR}' is deprecated`);
    }
    roots.push({ root: legacy, source: "project" });
  }
  const home = options.homeDir === undefined ? homedir() : options.homeDir;
  if (home) roots.push({ root: join(home, PROJECT_SKILLS_DIR), source: "global" });
  const bundled = options.bundledDir === undefined ? bundledSkillsDir() : options.bundledDir;
  if (bundled) roots.push({ root: bundled, source: "builtin" });
  return roots;
}

function subdirectories(root: string): string[] {
  try {
    return readdirSync(root, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() || (entry.isSymbolicLink() && statOrNull(join(root, entry.name))?.isDirectory()))
      .map((entry) => entry.name)
      .sort();
  } catch {
    return [];
  }
}

function casefold(text: string): string {
  return text.toLowerCase();
}

/**
 * Every valid skill visible from `workspace`, sorted by name; where names collide, project
 * skills win over global ones, and global over bundled.
 *
 * ```ts
 * const skills = discoverSkills(process.cwd());
 * skills.map((skill) => `${skill.name} (${skill.source})`);
 * ```
 */
export function discoverSkills(workspace: string, options: SkillDiscoveryOptions = {}): Skill[] {
  const byName = new Map<string, Skill>();
  const maxBytes = skillMaxBytes(options.maxBytes);
  for (const { root, source } of skillRoots(resolve(workspace), options)) {
    for (const name of subdirectories(root)) {
      const found = readSkill(join(root, name), maxBytes);
      if (!found) continue;
      const key = casefold(found.name);
      if (!byName.has(key)) byName.set(key, Object.freeze({ ...found, source }));
    }
  }
  return [...byName.values()].sort((a, b) => (casefold(a.name) < casefold(b.name) ? -1 : casefold(a.name) > casefold(b.name) ? 1 : 0));
}

/** Forgets cached SKILL.md parses (tests; a long-running process never needs it). */
export function clearSkillCache(): void {
  fileCache.clear();
  warnedLegacy.clear();
}
