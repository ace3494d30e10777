/**
 * Plugin discovery: which plugin modules a start registers, in order: the managed plugin
 * project, the workspace package and its dependencies, then the listed specifiers.
 */
import { dirname, isAbsolute, join, relative, resolve, basename, extname } from "node:path";
import { createRequire } from "node:module";
import { isRecord } from "../kernel/guards.ts";
import { FileRefusedError, readBoundedTextFile, SETTINGS_FILE_MAX_BYTES } from "../config/bounded-file.ts";
import { expandHome } from "../config/paths.ts";
import { errorMessage, toError } from "../config/thrown.ts";
import type { PluginApiField } from "../kernel/plugin-api.ts";

/** Where a discovered plugin came from. */
export type PluginOrigin = "project" | "workspace" | "config";

/** A plugin found by discovery, not yet imported. */
export interface PluginCandidate {
  /** Name it registers under (the key in `"bub": { "plugins": {...} }`, or derived from the path). */
  readonly name: string | null;
  readonly source: PluginOrigin;
  /** Absolute file path or module specifier to import. */
  readonly module: string;
  /** The package that declared it, when there is one. */
  readonly packageName?: string;
  /**
   * The range of the plugin API (or of bub-ts) its package.json says it supports, checked
   * before the module is imported; absent when it declares none.
   */
  readonly requires?: PluginRequirement;
}

/** A version range a plugin's package.json declares, and the field it is in. */
export interface PluginRequirement {
  readonly range: string;
  readonly field: PluginApiField;
}

/** Result of discovery: candidates in registration order, and problems met on the way. */
export interface Discovery {
  readonly candidates: PluginCandidate[];
  readonly problems: { name: string; source: PluginOrigin; error: Error }[];
  /** Plugins of an untrusted workspace, found but not to be loaded (see docs/security.md). */
  readonly skipped: PluginCandidate[];
}

/** The fields of a package.json discovery reads. */
export type PackageJson = {
  name?: string;
  bub?: { plugins?: Record<string, unknown>; api?: unknown };
  peerDependencies?: Record<string, unknown>;
  dependencies?: Record<string, unknown>;
  optionalDependencies?: Record<string, unknown>;
  devDependencies?: Record<string, unknown>;
};

/** The fields of {@link PackageJson} read from parsed package.json data; null when the data is no object. */
export function packageJsonOf(data: unknown): PackageJson | null {
  if (!isRecord(data)) return null;
  const mapping = (value: unknown) => (isRecord(value) ? value : undefined);
  const bub = mapping(data.bub);
  return {
    name: typeof data.name === "string" ? data.name : undefined,
    bub: bub ? { plugins: mapping(bub.plugins), api: bub.api } : undefined,
    peerDependencies: mapping(data.peerDependencies),
    dependencies: mapping(data.dependencies),
    optionalDependencies: mapping(data.optionalDependencies),
    devDependencies: mapping(data.devDependencies),
  };
}

/** A candidate declared by a package, so always named. */
type DeclaredCandidate = PluginCandidate & { readonly name: string };

/**
 * A package.json as an object; null when the file cannot be read or holds no object.
 * @throws FileRefusedError when it is not a regular file (a FIFO, a link to `/dev/zero`) or is
 *   larger than {@link SETTINGS_FILE_MAX_BYTES}; an Error when it is not JSON.
 */
async function readPackageJson(file: string): Promise<PackageJson | null> {
  let text: string;
  try {
    text = await readBoundedTextFile(file, { maxBytes: SETTINGS_FILE_MAX_BYTES, what: "package.json" });
  } catch (error) {
    if (error instanceof FileRefusedError) throw error;
    return null;
  }
  try {
    return packageJsonOf(JSON.parse(text));
  } catch (error) {
    throw new Error(`${file} is not valid JSON: ${errorMessage(error)}`);
  }
}

/**
 * The range a package.json says its plugins support: `"bub": { "api": "^2.0.0" }` (the
 * plugin API), else its `bub-ts` peer dependency (the bub-ts package); undefined when neither.
 */
export function pluginRequirement(pkg: Pick<PackageJson, "bub" | "peerDependencies">): PluginRequirement | undefined {
  const api = pkg.bub?.api;
  if (api !== undefined) return { range: typeof api === "string" ? api : JSON.stringify(api), field: "bub.api" };
  const peer = pkg.peerDependencies?.["bub-ts"];
  return typeof peer === "string" ? { range: peer, field: "peerDependencies.bub-ts" } : undefined;
}

/** {@link pluginRequirement} as a candidate's `requires` field (empty when none). */
function declaredRequirement(pkg: PackageJson): { requires?: PluginRequirement } {
  const requires = pluginRequirement(pkg);
  return requires ? { requires } : {};
}

function declaredPlugins(pkg: PackageJson, dir: string, source: PluginOrigin): DeclaredCandidate[] {
  const plugins = pkg.bub?.plugins;
  if (!plugins || typeof plugins !== "object") return [];
  const requirement = declaredRequirement(pkg);
  return Object.entries(plugins).map(([name, path]) => {
    if (typeof path !== "string") throw new Error(`package ${pkg.name ?? dir}: "bub.plugins.${name}" must be a path string`);
    return { name, source, module: resolve(dir, path), packageName: pkg.name, ...requirement };
  });
}

/**
 * The package.json nearest above a listed plugin file (the package it belongs to, as Node
 * decides a file's package); null when there is none or it cannot be read.
 */
async function nearestPackageJson(file: string): Promise<PackageJson | null> {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const pkg = await readPackageJson(join(dir, "package.json")).catch(() => null);
    if (pkg) return pkg;
    if (dirname(dir) === dir) return null;
  }
}

/**
 * Plugins declared by a package root and by its dependencies (`"bub": { "plugins": ... }`
 * in each package.json), sorted by plugin name.
 */
async function discoverInPackageRoot(root: string, source: PluginOrigin, problems: Discovery["problems"]): Promise<PluginCandidate[]> {
  const found: DeclaredCandidate[] = [];
  let rootPkg: PackageJson | null;
  try {
    rootPkg = await readPackageJson(join(root, "package.json"));
  } catch (error) {
    problems.push({ name: `${source}:${root}`, source, error: toError(error) });
    return found;
  }
  if (!rootPkg) return found;
  const collect = (pkg: PackageJson, dir: string) => {
    try {
      found.push(...declaredPlugins(pkg, dir, source));
    } catch (error) {
      problems.push({ name: pkg.name ?? dir, source, error: toError(error) });
    }
  };
  collect(rootPkg, root);
  const deps = new Set([
    ...Object.keys(rootPkg.dependencies ?? {}),
    ...Object.keys(rootPkg.optionalDependencies ?? {}),
    ...Object.keys(rootPkg.devDependencies ?? {}),
  ]);
  const packages = await Promise.all(
    [...deps].sort().map(async (dep) => {
      const dir = join(root, "node_modules", dep);
      try {
        return { dir, pkg: await readPackageJson(join(dir, "package.json")) };
      } catch (error) {
        problems.push({ name: dep, source, error: toError(error) });
        return { dir, pkg: null };
      }
    }),
  );
  for (const { dir, pkg } of packages) if (pkg?.bub) collect(pkg, dir);
  return found.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Splits `BUB_PLUGINS` (comma separated) into specifiers. */
export function parsePluginList(value: string | undefined): string[] {
  return (value ?? "").split(",").map((item) => item.trim()).filter(Boolean);
}

function isPathSpecifier(specifier: string): boolean {
  return specifier.startsWith(".") || specifier.startsWith("~") || isAbsolute(specifier) || /\.(c|m)?(j|t)s$/.test(specifier);
}

/**
 * Resolves an explicitly listed plugin: a file path (relative to the workspace) or a package
 * (looked up from the workspace, when trusted, then from the managed project).
 */
async function resolveListed(specifier: string, workspace: string, projectDir: string, problems: Discovery["problems"], trustWorkspace: boolean): Promise<PluginCandidate[]> {
  if (isPathSpecifier(specifier)) {
    const path = resolve(workspace, expandHome(specifier));
    const pkg = await nearestPackageJson(path);
    return [{ name: null, source: "config", module: path, ...(pkg ? declaredRequirement(pkg) : {}) }];
  }
  for (const base of trustWorkspace ? [workspace, projectDir] : [projectDir]) {
    let pkgFile: string;
    try {
      pkgFile = createRequire(join(base, "noop.js")).resolve(`${specifier}/package.json`);
    } catch {
      continue;
    }
    const dir = resolve(pkgFile, "..");
    const pkg = await readPackageJson(pkgFile).catch(() => null);
    if (pkg?.bub?.plugins) {
      try {
        return declaredPlugins(pkg, dir, "config");
      } catch (error) {
        problems.push({ name: specifier, source: "config", error: toError(error) });
        return [];
      }
    }
    return [{ name: specifier, source: "config", module: createRequire(join(base, "noop.js")).resolve(specifier), packageName: specifier, ...(pkg ? declaredRequirement(pkg) : {}) }];
  }
  return [{ name: specifier, source: "config", module: specifier }];
}

/** Whether `path` is `folder` or lies under it (compared as written, without resolving links). */
function isInside(path: string, folder: string): boolean {
  const rel = relative(resolve(folder), resolve(path));
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/** Where {@link discoverPlugins} looks. */
export interface DiscoverOptions {
  readonly projectDir: string;
  readonly workspace: string;
  readonly listed: readonly string[];
  /**
   * Whether the workspace's own code may load: its package.json plugins (and its
   * dependencies'), listed paths inside it and listed packages installed in it. Default true.
   */
  readonly trustWorkspace?: boolean;
  /** Folders always trusted even when inside the workspace (Bub's home). */
  readonly trustedFolders?: readonly string[];
}

/**
 * Finds plugins in registration order: the managed plugin project, the workspace package
 * and its dependencies, then the explicitly listed specifiers in the order given. In an
 * untrusted workspace the workspace's plugins are found (their package.json files are only
 * read) but returned as `skipped`.
 */
export async function discoverPlugins(options: DiscoverOptions): Promise<Discovery> {
  const trusted = options.trustWorkspace ?? true;
  const problems: Discovery["problems"] = [];
  const candidates: PluginCandidate[] = [];
  const skipped: PluginCandidate[] = [];
  candidates.push(...(await discoverInPackageRoot(options.projectDir, "project", problems)));
  if (resolve(options.workspace) !== resolve(options.projectDir)) {
    const found = await discoverInPackageRoot(options.workspace, "workspace", problems);
    (trusted ? candidates : skipped).push(...found);
  }
  const alwaysTrusted = [options.projectDir, ...(options.trustedFolders ?? [])];
  const inWorkspace = (module: string) => isAbsolute(module) && isInside(module, options.workspace) && !alwaysTrusted.some((folder) => isInside(module, folder));
  for (const specifier of options.listed) {
    const found = await resolveListed(specifier, options.workspace, options.projectDir, problems, trusted);
    for (const candidate of found) (trusted || !inWorkspace(candidate.module) ? candidates : skipped).push(candidate);
  }
  return { candidates, problems, skipped };
}

/** A default name for a plugin loaded from a path: the file name without extension (or its folder for index files). */
export function nameFromModule(module: string): string {
  const base = basename(module, extname(module));
  return base === "index" ? basename(resolve(module, "..")) : base;
}
