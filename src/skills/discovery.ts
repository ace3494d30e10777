/**
 * Skill discovery: the project, legacy project, global and bundled skill roots, in that order
 * of precedence. Invalid skills are skipped with a warning that names the file and the
 * problem (the reference skips them silently). Parsed files are cached by modification time
 * and size, so discovering on every model step costs a few `stat` calls.
 */
import { readdirSync, readFileSync, statSync, type Stats } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createLogger } from "../kernel/log.ts";
import { frontmatterProblem, parseFrontmatter } from "./frontmatter.ts";

const log = createLogger("bub:skills");

/** Skills of a workspace, relative to it. */
export const PROJECT_SKILLS_DIR = ".agents/skills";
/** The old location of project skills; still read, with a deprecation warning. */
export const LEGACY_SKILLS_DIR = ".agent/skills";
/** The file that makes a directory a skill. */
export const SKILL_FILE_NAME = "SKILL.md";

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
}

/** The package's bundled `skills/` directory (two levels above this module in both src/ and dist/). */
export function bundledSkillsDir(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "skills");
}

interface CachedFile {
  readonly mtimeMs: number;
  readonly size: number;
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

function readSkill(skillDir: string): Omit<Skill, "source"> | null {
  const file = join(skillDir, SKILL_FILE_NAME);
  const info = statOrNull(file);
  if (!info || !info.isFile()) return null;
  const cached = fileCache.get(file);
  if (cached && cached.mtimeMs === info.mtimeMs && cached.size === info.size) return cached.skill;
  const skill = parseSkill(file, basename(skillDir));
  fileCache.set(file, { mtimeMs: info.mtimeMs, size: info.size, skill });
  return skill;
}

function parseSkill(file: string, dirName: string): Omit<Skill, "source"> | null {
  let content: string;
  try {
    content = readFileSync(file, "utf8");
  } catch (error) {
    log.warn(`skill.invalid path=${file} problem=cannot read the file (${(error as Error).message})`);
    return null;
  }
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
  for (const { root, source } of skillRoots(resolve(workspace), options)) {
    for (const name of subdirectories(root)) {
      const found = readSkill(join(root, name));
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
