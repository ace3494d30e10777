/**
 * Skill discovery: the project, legacy project, global and bundled skill roots, in that order
 * of precedence. Invalid skills are skipped with a warning that names the file and the
 * problem (the reference skips them silently). Every file system call is asynchronous (no
 * synchronous call on a turn's path). Two caches keep discovery on every model step cheap:
 * parsed files by modification time and size, and whole results for `maxAgeMs` (default one
 * second), during which the disk is not touched at all; concurrent discoveries of the same
 * roots share one scan.
 */
import type { Stats } from "node:fs";
import { open, readdir, stat } from "node:fs/promises";
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
export async function readSkillFile(file: string, maxBytes: number): Promise<string | null> {
  const handle = await open(file, "r");
  try {
    const buffer = Buffer.allocUnsafe(maxBytes + 1);
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    if (filled > maxBytes) {
      warnTooLarge(file, Math.max(filled, (await statOrNull(file))?.size ?? 0), maxBytes);
      return null;
    }
    return buffer.toString("utf8", 0, filled);
  } finally {
    await handle.close();
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
  /**
   * The SKILL.md text as discovery read it (its size and modification time were checked by the
   * discovery that returned this skill), so rendering the body needs no second read. Not
   * enumerable: listing skills as JSON leaves it out.
   */
  readonly content?: string;
}

/** Options of {@link discoverSkills}. */
export interface SkillDiscoveryOptions {
  /** Home directory whose `.agents/skills` holds global skills; default `os.homedir()`. */
  homeDir?: string | null;
  /** The bundled skills directory; default the package's `skills/`; null: none. */
  bundledDir?: string | null;
  /** A SKILL.md larger than this is skipped with a warning; default {@link DEFAULT_SKILL_MAX_BYTES}. */
  maxBytes?: number;
  /**
   * A discovery of the same workspace, home, bundled directory and `maxBytes` that started
   * less than this many milliseconds ago is returned without touching the disk; default
   * {@link DEFAULT_SKILL_MAX_AGE_MS}. 0 always scans.
   */
  maxAgeMs?: number;
}

/** Default `maxAgeMs`: skills are re-read at most once a second. */
export const DEFAULT_SKILL_MAX_AGE_MS = 1000;

let bundled: string | undefined;

/** The package's bundled `skills/` directory (two levels above this module in both src/ and dist/). */
export function bundledSkillsDir(): string {
  return (bundled ??= resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "skills"));
}

interface CachedFile {
  readonly mtimeMs: number;
  readonly size: number;
  readonly maxBytes: number;
  readonly skill: Omit<Skill, "source"> | null;
}

/** Most SKILL.md parses kept; the oldest is forgotten first. */
const MAX_CACHED_FILES = 1024;
/** Most discovery results kept (one per workspace, home, bundled directory and limit). */
const MAX_CACHED_DISCOVERIES = 32;
/** Most legacy directories remembered as warned about. */
const MAX_WARNED_LEGACY = 256;

const fileCache = new Map<string, CachedFile>();
const warnedLegacy = new Map<string, true>();

interface CachedDiscovery {
  /** `performance.now()` when the scan started: the result shows the disk as of then or later. */
  readonly startedAt: number;
  readonly result: Promise<readonly Skill[]>;
  settled: boolean;
}

const discoveries = new Map<string, CachedDiscovery>();

/** Sets `key` as the newest entry of `map`, forgetting the oldest beyond `max`. */
function remember<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  for (const oldest of map.keys()) {
    if (map.size <= max) break;
    map.delete(oldest);
  }
}

async function statOrNull(path: string): Promise<Stats | null> {
  try {
    return await stat(path);
  } catch {
    return null;
  }
}

async function readSkill(skillDir: string, maxBytes: number): Promise<Omit<Skill, "source"> | null> {
  const file = join(skillDir, SKILL_FILE_NAME);
  const info = await statOrNull(file);
  if (!info || !info.isFile()) return null;
  const cached = fileCache.get(file);
  if (cached && cached.mtimeMs === info.mtimeMs && cached.size === info.size && cached.maxBytes === maxBytes) return cached.skill;
  let skill: Omit<Skill, "source"> | null;
  if (info.size > maxBytes) {
    // Warned once per change of the file: the result is cached like a parse.
    warnTooLarge(file, info.size, maxBytes);
    skill = null;
  } else {
    skill = await parseSkill(file, basename(skillDir), maxBytes);
  }
  remember(fileCache, file, { mtimeMs: info.mtimeMs, size: info.size, maxBytes, skill }, MAX_CACHED_FILES);
  return skill;
}

async function parseSkill(file: string, dirName: string, maxBytes: number): Promise<Omit<Skill, "source"> | null> {
  let content: string | null;
  try {
    content = await readSkillFile(file, maxBytes);
  } catch (error) {
    log.warn(`skill.invalid path=${file} problem=cannot read the file (${error instanceof Error ? error.message : String(error)})`);
    return null;
  }
  if (content === null) return null;
  const parsed = parseFrontmatter(content);
  const problem = parsed.ok ? frontmatterProblem(dirName, parsed.data) : parsed.problem;
  if (!parsed.ok || problem) {
    log.warn(`skill.invalid path=${file} problem=${problem}`);
    return null;
  }
  const skill = {
    name: String(parsed.data.name).trim(),
    description: String(parsed.data.description).trim(),
    location: resolve(file),
    metadata: Object.freeze({ ...parsed.data }),
  };
  return Object.defineProperty(skill, "content", { value: content, enumerable: false });
}

interface Roots {
  readonly workspace: string;
  readonly home: string | null;
  readonly bundled: string | null;
}

function rootsOf(workspace: string, options: SkillDiscoveryOptions): Roots {
  return {
    workspace: resolve(workspace),
    home: (options.homeDir === undefined ? homedir() : options.homeDir) || null,
    bundled: (options.bundledDir === undefined ? bundledSkillsDir() : options.bundledDir) || null,
  };
}

async function skillRoots({ workspace, home, bundled }: Roots): Promise<{ root: string; source: SkillSource }[]> {
  const roots: { root: string; source: SkillSource }[] = [{ root: join(workspace, PROJECT_SKILLS_DIR), source: "project" }];
  const legacy = join(workspace, LEGACY_SKILLS_DIR);
  if ((await statOrNull(legacy))?.isDirectory()) {
    if (!warnedLegacy.has(legacy)) {
      remember(warnedLegacy, legacy, true, MAX_WARNED_LEGACY);
      log.warn(`skill.legacy_dir path=${legacy}: move these skills to ${join(workspace, PROJECT_SKILLS_DIR)}; '${LEGACY_SKILLS_DIR}' is deprecated`);
    }
    roots.push({ root: legacy, source: "project" });
  }
  if (home) roots.push({ root: join(home, PROJECT_SKILLS_DIR), source: "global" });
  if (bundled) roots.push({ root: bundled, source: "builtin" });
  return roots;
}

async function subdirectories(root: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(root, { withFileTypes: true });
  } catch {
    return [];
  }
  const kept = await Promise.all(
    entries.map(async (entry) => entry.isDirectory() || (entry.isSymbolicLink() && (await statOrNull(join(root, entry.name)))?.isDirectory() === true)),
  );
  return entries
    .filter((_entry, index) => kept[index])
    .map((entry) => entry.name)
    .sort();
}

function casefold(text: string): string {
  return text.toLowerCase();
}

async function scan(roots: Roots, maxBytes: number): Promise<readonly Skill[]> {
  // Roots and skills are read in parallel, then merged in order of precedence.
  const found = await Promise.all(
    (await skillRoots(roots)).map(async ({ root, source }) => ({
      source,
      skills: await Promise.all((await subdirectories(root)).map((name) => readSkill(join(root, name), maxBytes))),
    })),
  );
  const byName = new Map<string, Skill>();
  for (const { source, skills } of found) {
    for (const skill of skills) {
      if (!skill) continue;
      const key = casefold(skill.name);
      if (!byName.has(key)) byName.set(key, Object.freeze(Object.defineProperty({ ...skill, source }, "content", { value: skill.content, enumerable: false })));
    }
  }
  return Object.freeze([...byName.values()].sort((a, b) => (casefold(a.name) < casefold(b.name) ? -1 : casefold(a.name) > casefold(b.name) ? 1 : 0)));
}

/**
 * `previous` when `next` lists the same skills (the same parse of the same files, from the same
 * roots), else `next`: a scan that found nothing new keeps the result's identity, so what a
 * caller keeps against it (the rendered prompt block, `render.ts`) stays good.
 */
function sameOrNext(previous: readonly Skill[] | undefined, next: readonly Skill[]): readonly Skill[] {
  if (previous === undefined || previous.length !== next.length) return next;
  for (let index = 0; index < next.length; index++) {
    const was = previous[index];
    const now = next[index];
    if (was.location !== now.location || was.source !== now.source || was.metadata !== now.metadata || was.content !== now.content) return next;
  }
  return previous;
}

/**
 * Every valid skill visible from `workspace`, sorted by name; where names collide, project
 * skills win over global ones, and global over bundled. The result is frozen and may be the
 * same array as an earlier discovery's: one of the same roots that started less than
 * `maxAgeMs` ago (default one second), or one still running, is shared, not repeated; and a
 * later scan that finds the same skills answers the array it replaces.
 *
 * ```ts
 * const skills = await discoverSkills(process.cwd());
 * skills.map((skill) => `${skill.name} (${skill.source})`);
 * ```
 */
export function discoverSkills(workspace: string, options: SkillDiscoveryOptions = {}): Promise<readonly Skill[]> {
  const roots = rootsOf(workspace, options);
  const maxBytes = skillMaxBytes(options.maxBytes);
  const maxAgeMs = options.maxAgeMs ?? DEFAULT_SKILL_MAX_AGE_MS;
  const key = JSON.stringify([roots.workspace, roots.home, roots.bundled, maxBytes]);
  const now = performance.now();
  const cached = discoveries.get(key);
  if (cached && maxAgeMs > 0 && (!cached.settled || now - cached.startedAt < maxAgeMs)) return cached.result;
  const previous = cached?.result.catch(() => undefined);
  const entry: CachedDiscovery = { startedAt: now, result: scan(roots, maxBytes).then(async (next) => sameOrNext(await previous, next)), settled: false };
  remember(discoveries, key, entry, MAX_CACHED_DISCOVERIES);
  entry.result.then(
    () => (entry.settled = true),
    () => {
      if (discoveries.get(key) === entry) discoveries.delete(key);
    },
  );
  return entry.result;
}

/** Forgets cached SKILL.md parses and discovery results (tests; a long-running process never needs it). */
export function clearSkillCache(): void {
  fileCache.clear();
  discoveries.clear();
  warnedLegacy.clear();
}
