/**
 * The managed plugin project (`BUB_PROJECT`, default `<BUB_HOME>/bub-project`): an npm
 * package whose dependencies are the installed plugins. `bub install`, `bub update` and
 * `bub uninstall` run npm in it; plugin discovery reads it on the next start.
 *
 * Plugins declare `bub-ts` as a peer dependency, and bub-ts is not fetched from a registry:
 * the project depends on `bub-ts` as `file:.bub-ts`, a small package in the project that
 * carries the running copy's version and re-exports its library entry (see
 * {@link linkRuntime}), so npm links it and finds every plugin's peer satisfied.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { readBoundedTextFile, SETTINGS_FILE_MAX_BYTES } from "../../config/bounded-file.ts";
import { expandHome } from "../../config/paths.ts";
import { makeDirectoryAsync } from "../../config/home-dir.ts";
import { selfIndexUrl } from "../../plugins/load.ts";
import { packageJsonOf, pluginRequirement, type PackageJson, type PluginRequirement } from "../../plugins/discovery.ts";
import { isRecord } from "../../kernel/guards.ts";
import { checkPluginRequirement } from "../../plugins/api-check.ts";
import { IncompatiblePluginError } from "../../kernel/plugin-api.ts";

/** Runs npm with `args` in `cwd` and resolves with its exit code. */
export type NpmRunner = (args: readonly string[], options: { cwd: string }) => Promise<number>;

/** Where install/update/uninstall write their messages. */
export interface ProjectIO {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** Options shared by the three commands. */
export interface ProjectCommandOptions {
  /** The project directory (`--project`); default `BUB_PROJECT` or `<BUB_HOME>/bub-project`. */
  project?: string;
}

/** What the commands need besides their arguments. */
export interface ProjectContext {
  /** The default project directory (the framework's `projectDir`). */
  defaultProject: string;
  /** Directory relative paths in specs are resolved against (the current directory). */
  cwd: string;
  npm: NpmRunner;
  io: ProjectIO;
  /** The bub-ts plugins resolve to; default the running copy ({@link runningPackage}). */
  runtime?: RuntimePackage;
}

/** A bub-ts installation, as the project's `bub-ts` dependency stands in for it. */
export interface RuntimePackage {
  /** Its package root (the folder with its package.json). */
  root: string;
  version: string;
  /** URL of its library entry (what `import "bub-ts"` loads). */
  entry: string;
}

/** The running copy of bub-ts. */
export function runningPackage(): RuntimePackage {
  const entry = selfIndexUrl();
  const root = fileURLToPath(new URL("..", entry));
  const data: unknown = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  if (!isRecord(data) || typeof data.version !== "string") throw new Error(`${join(root, "package.json")} names no version`);
  return { root, version: data.version, entry: entry.href };
}

/** The project's `bub-ts` dependency when bub manages it. */
export const RUNTIME_SPEC = "file:.bub-ts";

/** A package.json of the plugin project, bounded like every file bub reads on its own. */
function readManifest(file: string): Promise<string> {
  return readBoundedTextFile(file, { maxBytes: SETTINGS_FILE_MAX_BYTES, what: "package.json" });
}

async function writeIfChanged(file: string, text: string): Promise<boolean> {
  const old = await readBoundedTextFile(file, { maxBytes: SETTINGS_FILE_MAX_BYTES, what: file }).catch(() => null);
  if (old === text) return false;
  await writeFile(file, text);
  return true;
}

/**
 * Points the project's `bub-ts` at `runtime`: writes `<dir>/.bub-ts` (a package named
 * bub-ts with the runtime's version whose entry re-exports the runtime's) and lists it as
 * `"bub-ts": "file:.bub-ts"`, so npm links it instead of fetching a `bub-ts` that plugins
 * name as their peer. Files are rewritten only when the runtime changed. A project that
 * already lists `bub-ts` otherwise (its own checkout, say) is left alone.
 */
export async function linkRuntime(dir: string, runtime: RuntimePackage): Promise<void> {
  const file = join(dir, "package.json");
  let manifest: Record<string, unknown>;
  try {
    const data: unknown = JSON.parse(await readManifest(file));
    if (!isRecord(data)) throw new Error("it holds no JSON object");
    manifest = data;
  } catch (error) {
    throw new Error(`Cannot read the plugin project's ${file}: ${error instanceof Error ? error.message : String(error)}. Fix or remove the file and run the command again.`);
  }
  const dependencies = isRecord(manifest.dependencies) ? manifest.dependencies : undefined;
  const listed = dependencies?.["bub-ts"];
  if (listed !== undefined && listed !== RUNTIME_SPEC) return;
  const stub = join(dir, ".bub-ts");
  await mkdir(stub, { recursive: true });
  const pkg = {
    name: "bub-ts",
    version: runtime.version,
    description: `Stands in for the bub-ts that runs these plugins (${runtime.root}); bub rewrites it when that changes.`,
    private: true,
    type: "module",
    main: "./index.js",
    exports: { ".": "./index.js", "./package.json": "./package.json" },
  };
  await writeIfChanged(join(stub, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
  await writeIfChanged(join(stub, "index.js"), `// The bub-ts that runs these plugins; bub rewrites this file when that changes.\nexport * from ${JSON.stringify(runtime.entry)};\n`);
  if (listed === undefined) {
    manifest.dependencies = { ...dependencies, "bub-ts": RUNTIME_SPEC };
    await writeFile(file, `${JSON.stringify(manifest, null, 2)}\n`);
  }
}

/** A runner that spawns `command` (default `BUB_NPM` or `npm`) with inherited output. */
export function spawnNpm(command = process.env.BUB_NPM || "npm"): NpmRunner {
  return (args, { cwd }) =>
    new Promise((done, fail) => {
      const child = spawn(command, [...args], { cwd, stdio: "inherit", shell: process.platform === "win32" });
      child.once("error", (error) => fail(new Error(`Cannot run '${command}': ${error.message}. Install Node.js with npm, or set BUB_NPM to the npm executable.`)));
      child.once("exit", (code, signal) => done(code ?? (signal ? 1 : 0)));
    });
}

/** The project directory for `--project` (relative to the current directory) or the default. */
export function projectDirOf(context: ProjectContext, options: ProjectCommandOptions): string {
  const given = options.project;
  if (!given) return context.defaultProject;
  return resolve(context.cwd, expandHome(given));
}

/** Creates the project's package.json on first use; true when it was created. */
export async function ensureProject(dir: string): Promise<boolean> {
  const file = join(dir, "package.json");
  if (existsSync(file)) return false;
  // Private like the rest of BUB_HOME, where it lives by default (npm's files inside keep the umask's modes).
  await makeDirectoryAsync(dir);
  const manifest = {
    name: "bub-project",
    version: "0.0.0",
    private: true,
    description: "Plugins installed with `bub install`; Bub loads the ones listed here on start.",
    type: "module",
    dependencies: {},
  };
  await writeFile(file, `${JSON.stringify(manifest, null, 2)}\n`);
  return true;
}

const GIT_HOSTS = /^https?:\/\/(www\.)?(github\.com|gitlab\.com|bitbucket\.org)\//;

/**
 * Turns what a person types into what npm installs:
 * - local paths (`./plugin`, `/abs/plugin`, `~/plugin`, or an existing directory) → `file:<absolute path>`;
 * - `git@host:owner/repo.git` → `git+ssh://git@host:owner/repo.git`;
 * - `https://github.com/owner/repo[.git][#ref]` (also GitLab, Bitbucket, any `.git` URL) → `git+https://...`;
 * - `owner/repo`, `owner/repo#ref` or `owner/repo@ref` → `github:owner/repo[#ref]`;
 * - npm names, `name@version`, `@scope/name[@version]`, tarball URLs and `git+…` URLs unchanged.
 */
export function toNpmSpec(spec: string, cwd: string): string {
  const trimmed = spec.trim();
  if (trimmed === "") throw new Error("An empty plugin spec was given: pass an npm name, a path, a git URL or owner/repo.");
  if (trimmed.startsWith("file:") || trimmed.startsWith("git+") || trimmed.startsWith("github:") || trimmed.startsWith("npm:")) return trimmed;
  if (trimmed.startsWith("~") || trimmed.startsWith(".") || isAbsolute(trimmed)) return `file:${resolve(cwd, expandHome(trimmed))}`;
  if (/^git@[^:]+:/.test(trimmed)) return `git+ssh://${trimmed}`;
  if (/^https?:\/\//.test(trimmed)) {
    const [url] = trimmed.split("#");
    if (GIT_HOSTS.test(trimmed) || url.endsWith(".git")) return `git+${trimmed}`;
    return trimmed;
  }
  const github = /^([A-Za-z0-9][\w.-]*)\/([\w.-]+?)(?:[#@](.+))?$/.exec(trimmed);
  if (github && !existsSync(resolve(cwd, trimmed))) return `github:${github[1]}/${github[2]}${github[3] ? `#${github[3]}` : ""}`;
  if (!trimmed.startsWith("@") && trimmed.includes("/") && existsSync(resolve(cwd, trimmed))) return `file:${resolve(cwd, trimmed)}`;
  return trimmed;
}

/** Runs one npm command in the project; a failure is reported and becomes the exit code. */
export async function runNpm(context: ProjectContext, dir: string, args: readonly string[]): Promise<number> {
  const code = await context.npm(args, { cwd: dir });
  if (code !== 0) {
    context.io.stderr.write(
      `bub: \`npm ${args.join(" ")}\` failed with exit code ${code} in ${dir} — check npm's message above; the plugin project was left as npm left it\n`,
    );
  }
  return code;
}

/** The packages the project lists (dependencies, optional and dev dependencies), sorted; none when it has no package.json. */
export async function projectDependencies(dir: string): Promise<string[]> {
  let manifest: PackageJson | null;
  try {
    manifest = packageJsonOf(JSON.parse(await readManifest(join(dir, "package.json"))));
  } catch {
    return [];
  }
  if (!manifest) return [];
  return [...new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.optionalDependencies ?? {}), ...Object.keys(manifest.devDependencies ?? {})])].sort();
}

/**
 * Every plugin the project's installed packages declare (`"bub": { "plugins": {...} }`),
 * with the dependency name npm knows the package by, in dependency order.
 */
export async function declaredPlugins(dir: string): Promise<{ plugin: string; dependency: string; requires?: PluginRequirement }[]> {
  const found: { plugin: string; dependency: string; requires?: PluginRequirement }[] = [];
  for (const dependency of await projectDependencies(dir)) {
    try {
      const pkg = packageJsonOf(JSON.parse(await readManifest(join(dir, "node_modules", dependency, "package.json"))));
      if (!pkg) continue;
      const requires = pluginRequirement(pkg);
      found.push(...Object.keys(pkg.bub?.plugins ?? {}).map((plugin) => ({ plugin, dependency, ...(requires ? { requires } : {}) })));
    } catch {
      // Not installed (yet): nothing to list.
    }
  }
  return found;
}

/**
 * Prints where the project is and which plugins it now provides, with a line for each one
 * written for a plugin API this bub does not run (it will not load).
 */
export async function printSummary(context: ProjectContext, dir: string): Promise<void> {
  const declared = await declaredPlugins(dir);
  const plugins = declared.map(({ plugin, dependency }) => `${plugin} (${dependency})`);
  context.io.stdout.write(`Plugin project: ${dir}\n`);
  context.io.stdout.write(plugins.length > 0 ? `Plugins: ${plugins.join(", ")}\n` : "Plugins: (none)\n");
  for (const { plugin, dependency, requires } of declared) {
    const mismatch = await checkPluginRequirement(plugin, requires);
    if (mismatch instanceof IncompatiblePluginError) context.io.stdout.write(`Incompatible: ${plugin} (${dependency}) ${mismatch.summary}; it will not load.\n`);
  }
  context.io.stdout.write("They load on the next start; run `bub plugins` to see what loaded.\n");
}

/** The context the command actions use: the framework's project dir, real npm, process output. */
export function processContext(defaultProject: string): ProjectContext {
  return { defaultProject, cwd: process.cwd(), npm: spawnNpm(), io: { stdout: process.stdout, stderr: process.stderr } };
}

/**
 * Runs npm with `args` in the plugin project (creating the project first when needed) and
 * prints the installed plugins when it succeeds. Returns npm's exit code.
 */
export async function runInProject(context: ProjectContext, options: ProjectCommandOptions, args: readonly string[]): Promise<number> {
  const dir = projectDirOf(context, options);
  if (await ensureProject(dir)) context.io.stdout.write(`Created the plugin project at ${dir}\n`);
  await linkRuntime(dir, context.runtime ?? runningPackage());
  const code = await runNpm(context, dir, args);
  if (code === 0) await printSummary(context, dir);
  return code;
}
