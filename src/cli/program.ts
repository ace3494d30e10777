import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { Command, type CommanderError, type OutputConfiguration } from "commander";
import { createBub, type UntrustedWorkspace } from "../builtin/create.ts";
import type { BubFramework } from "../kernel/framework.ts";
import { loadDotEnv } from "../config/settings.ts";
import { homeProblem } from "../config/home-dir.ts";
import { bubHome, expandHome } from "../config/paths.ts";
import { describeError } from "../kernel/errors.ts";
import { colorFromEnv, stdoutIsPlain, writeStdout } from "./stdout.ts";
import { packageVersion } from "./version.ts";

/** Exit codes of every `bub` command. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** Where the CLI writes; tests pass their own streams. */
export interface CliIO {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** `-w/--workspace` must be known before plugins are discovered, so it is read ahead of commander. */
function workspaceFromArgs(argv: readonly string[]): string | undefined {
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (arg === "--") break;
    if ((arg === "-w" || arg === "--workspace") && argv[index + 1]) return argv[index + 1];
    if (arg.startsWith("--workspace=")) return arg.slice("--workspace=".length);
  }
  return undefined;
}

/**
 * The subcommand `argv` dispatches to, for {@link createProgram}'s `registerCliCommands`
 * hint: the first argument that is not a global option, unless help or the version is asked
 * for first (those need every command).
 */
export function commandFromArgs(argv: readonly string[]): string | undefined {
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (arg === "-w" || arg === "--workspace") index++;
    else if (arg.startsWith("--workspace=")) continue;
    else if (arg.startsWith("-")) return undefined;
    else return arg === "help" ? undefined : arg;
  }
  return undefined;
}

/**
 * Turns any failure into one readable paragraph (plus the stack with BUB_DEBUG=1). A
 * configuration error already says where the problem is and what to do, so its message is
 * printed as it is, without the `[config]` kind.
 */
export function formatFailure(error: unknown): string {
  const message = error instanceof Error && (error.name === "ConfigError" || error.name === "YamlError") ? error.message : describeError(error);
  const stack = process.env.BUB_DEBUG && error instanceof Error && error.stack ? `\n${error.stack}` : "";
  return `bub: ${message}${stack}\n`;
}

/**
 * Builds the commander program: global options, then the plugins' commands. With `argv`,
 * plugins learn which command will run (see {@link commandFromArgs}) and may skip the rest.
 */
export async function createProgram(framework: BubFramework, io: CliIO, argv?: readonly string[]): Promise<Command> {
  const app = new Command("bub");
  const defaults = app.configureOutput() as OutputConfiguration;
  // commander's own help width and colour answers, except that they read `process.stdout`
  // only when stdout is not a plain file or pipe (where it is no TTY: no width, no colour).
  const output: OutputConfiguration = {
    writeOut: (text) => io.stdout.write(text),
    writeErr: (text) => io.stderr.write(text),
    getOutHelpWidth: () => (stdoutIsPlain() ? undefined : defaults.getOutHelpWidth!()) as number,
    getOutHasColors: () => (stdoutIsPlain() ? (colorFromEnv() ?? false) : defaults.getOutHasColors!()),
  };
  app
    .description("Batteries-included, hook-first AI framework")
    .version(packageVersion(), "-V, --version", "print the version")
    .option("-w, --workspace <path>", "directory the agent works in (default: the current directory)")
    .showHelpAfterError("(run with --help for usage)")
    .configureOutput(output)
    .exitOverride();
  app.hook("preAction", (command) => {
    const workspace = command.opts().workspace as string | undefined;
    if (workspace) framework.workspace = resolve(workspace);
  });
  const command = argv ? commandFromArgs(argv) : undefined;
  framework.runtime.callManySync("registerCliCommands", command === undefined ? { app } : { app, command });
  if (app.commands.length === 0) {
    app.command("help").description("show help").action(() => {
      io.stdout.write("No CLI command loaded.\n");
    });
  }
  for (const command of app.commands) command.exitOverride().configureOutput(output);
  return app;
}

/** Commands that keep state under `BUB_HOME` (tapes, history, config): it must be a writable folder. */
const HOME_COMMANDS = new Set(["run", "chat", "gateway", "onboard"]);

/**
 * The one line printed when an untrusted folder had code or settings that were not loaded:
 * its package.json plugins, `plugins:` paths inside it, its `.env`.
 */
export function untrustedNotice(workspace: string, skipped: UntrustedWorkspace | null, dotEnvFolder: string | null): string | null {
  const byFolder = new Map<string, string[]>();
  const add = (folder: string, item: string) => byFolder.set(folder, [...(byFolder.get(folder) ?? []), item]);
  if (skipped?.packagePlugins.length) add(skipped.workspace, "package.json plugins");
  if (skipped?.listedPlugins.length) add(skipped.workspace, `plugins inside it (${skipped.listedPlugins.join(", ")})`);
  if (dotEnvFolder) add(dotEnvFolder, ".env");
  if (byFolder.size === 0) return null;
  const and = (items: string[]) => (items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`);
  const command = (folder: string) => (folder === workspace ? "bub trust" : `bub trust ${folder}`);
  if (byFolder.size === 1) {
    const [[folder, items]] = [...byFolder];
    return `bub: this folder is not trusted, so its ${and(items)} ${items.length === 1 && items[0] === ".env" ? "was" : "were"} not loaded — run \`${command(folder)}\` to trust ${folder}\n`;
  }
  const what = [...byFolder].map(([folder, items]) => `${folder}'s ${and(items)}`);
  const how = [...byFolder.keys()].map((folder) => `\`bub trust ${folder}\``);
  return `bub: these folders are not trusted, so ${and(what)} were not loaded — run ${and(how)} to trust them\n`;
}

/** The process's stdout and stderr, created only when written to. */
const defaultIO: CliIO = { stdout: { write: writeStdout }, stderr: { write: (text) => process.stderr.write(text) } };

/**
 * Runs the `bub` command line with `argv` (without `node` and the script) and returns the
 * exit code: 0 ok, 1 failure, 2 usage error.
 */
export async function main(argv: readonly string[], io: CliIO = defaultIO): Promise<number> {
  // Workspace trust (docs/security.md): the folder's .env and its own plugins load only once
  // `bub trust` recorded it, as it is now, in the environment's BUB_HOME.
  const cwd = process.cwd();
  const workspace = resolve(expandHome(workspaceFromArgs(argv) ?? cwd));
  const dotEnv = join(cwd, ".env");
  const hasDotEnv = existsSync(dotEnv);
  let workspaceTrusted: boolean;
  let cwdTrusted: boolean;
  try {
    const trustHome = bubHome(process.env);
    // No trust.json (the usual case) trusts nothing: the trust module is not even loaded.
    const isTrusted = existsSync(join(trustHome, "trust.json")) ? (await import("../config/trust.ts")).isTrusted : async () => false;
    workspaceTrusted = await isTrusted(trustHome, workspace);
    cwdTrusted = !hasDotEnv || (resolve(cwd) === workspace ? workspaceTrusted : await isTrusted(trustHome, cwd));
  } catch (error) {
    io.stderr.write(formatFailure(error));
    return EXIT.failure;
  }
  if (cwdTrusted) loadDotEnv(dotEnv);
  const command = commandFromArgs(argv);
  if (HOME_COMMANDS.has(command ?? "")) {
    // Checked once, up front: a home that cannot be created fails here with one line,
    // instead of in the middle of a turn (or in a loop of retries).
    const problem = homeProblem(bubHome(process.env));
    if (problem) {
      io.stderr.write(`bub: ${problem}\n`);
      return EXIT.failure;
    }
  }
  let app: Command;
  let framework: BubFramework;
  try {
    const skipped: UntrustedWorkspace[] = [];
    framework = await createBub({ workspace, trustWorkspace: workspaceTrusted, onUntrustedWorkspace: (found) => skipped.push(found) });
    const notice = command === "trust" ? null : untrustedNotice(workspace, skipped[0] ?? null, cwdTrusted ? null : cwd);
    if (notice) io.stderr.write(notice);
    app = await createProgram(framework, io, argv);
  } catch (error) {
    io.stderr.write(formatFailure(error));
    return EXIT.failure;
  }
  try {
    await app.parseAsync([...argv], { from: "user" });
    return typeof process.exitCode === "number" ? process.exitCode : EXIT.ok;
  } catch (error) {
    const commanderError = error as CommanderError;
    if (typeof commanderError?.exitCode === "number" && typeof commanderError.code === "string" && commanderError.code.startsWith("commander.")) {
      if (["commander.helpDisplayed", "commander.version", "commander.help"].includes(commanderError.code)) return EXIT.ok;
      return EXIT.usage;
    }
    io.stderr.write(formatFailure(error));
    return EXIT.failure;
  }
}
