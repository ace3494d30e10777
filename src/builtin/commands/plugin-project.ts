/**
 * The managed plugin project (`BUB_PROJECT`, default `<BUB_HOME>/bub-project`): an npm
 * package whose dependencies are the installed plugins. `bub install`, `bub update` and
 * `bub uninstall` run npm in it; plugin discovery reads it on the next start.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { isAbsolute, join, resolve } from "node:path";
import { expandHome } from "../../config/paths.ts";

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
  await mkdir(dir, { recursive: true });
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
    if (GIT_HOSTS.test(trimmed) || url!.endsWith(".git")) return `git+${trimmed}`;
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
      `bub: Command 'npm ${args.join(" ")}' failed with exit code ${code} in ${dir}. Check npm's message above; the plugin project was left as npm left it.\n`,
    );
  }
  return code;
}

/** The plugins packages in the project declare (`"bub": { "plugins": {...} }`), for the summary line. */
export async function declaredPluginNames(dir: string): Promise<string[]> {
  let manifest: { dependencies?: Record<string, string> };
  try {
    manifest = JSON.parse(await readFile(join(dir, "package.json"), "utf8")) as typeof manifest;
  } catch {
    return [];
  }
  const names: string[] = [];
  for (const dependency of Object.keys(manifest.dependencies ?? {}).sort()) {
    try {
      const pkg = JSON.parse(await readFile(join(dir, "node_modules", dependency, "package.json"), "utf8")) as { bub?: { plugins?: Record<string, unknown> } };
      names.push(...Object.keys(pkg.bub?.plugins ?? {}).map((plugin) => `${plugin} (${dependency})`));
    } catch {
      // Not installed (yet): nothing to list.
    }
  }
  return names;
}

/** Prints where the project is and which plugins it now provides. */
export async function printSummary(context: ProjectContext, dir: string): Promise<void> {
  const plugins = await declaredPluginNames(dir);
  context.io.stdout.write(`Plugin project: ${dir}\n`);
  context.io.stdout.write(plugins.length > 0 ? `Plugins: ${plugins.join(", ")}\n` : "Plugins: (none)\n");
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
  const code = await runNpm(context, dir, args);
  if (code === 0) await printSummary(context, dir);
  return code;
}
