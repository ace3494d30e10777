import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { Argument, Command, type OutputConfiguration } from "commander";
import { createBub, type UntrustedWorkspace } from "../builtin/create.ts";
import type { BubFramework } from "../kernel/framework.ts";
import type { LogSink } from "../kernel/log.ts";
import { loadDotEnv } from "../config/settings.ts";
import { homeProblem } from "../config/home-dir.ts";
import { bubHome, expandHome } from "../config/paths.ts";
import { errorLine } from "../builtin/error-line.ts";
import { commandNeedsAgent } from "../builtin/commands/index.ts";
import { installCliLogging } from "./logging.ts";
import { stderrBatch } from "./stderr-batch.ts";
import { colorFromEnv, stdoutIsPlain, writeStdout } from "./stdout.ts";
import { packageVersion } from "./version.ts";

/** Exit codes of every `bub` command. */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** Where the CLI writes; tests pass their own streams. */
export interface CliIO {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/** The global `--verbose`, read ahead of commander so failures before parsing show their causes too. */
export function verboseFromArgs(argv: readonly string[]): boolean {
  for (const arg of argv) {
    if (arg === "--") return false;
    if (arg === "--verbose") return true;
  }
  return false;
}

/** The `commander.*` code of commander's exit (usage error, help, version), or null for any other failure. */
function commanderCode(error: unknown): string | null {
  if (typeof error !== "object" || error === null || !("exitCode" in error) || typeof error.exitCode !== "number") return null;
  return "code" in error && typeof error.code === "string" && error.code.startsWith("commander.") ? error.code : null;
}

/** `-w/--workspace` must be known before plugins are discovered, so it is read ahead of commander. */
function workspaceFromArgs(argv: readonly string[]): string | undefined {
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index];
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
    const arg = argv[index];
    if (arg === "-w" || arg === "--workspace") index++;
    else if (arg.startsWith("--workspace=") || arg === "--verbose") continue;
    else if (arg.startsWith("-")) return undefined;
    // `completion` describes every command, as help does.
    else return arg === "help" || arg === "completion" ? undefined : arg;
  }
  return undefined;
}

/** Whether `argv` asks for help (`-h`/`--help` before any `--`): no command runs then. */
function asksForHelp(argv: readonly string[]): boolean {
  const end = argv.indexOf("--");
  return (end < 0 ? argv : argv.slice(0, end)).some((arg) => arg === "--help" || arg === "-h");
}

/**
 * Turns any failure into `bub: <what happened> — <what to do>` (see {@link errorLine}),
 * with its causes when `verbose`, and the stack with BUB_DEBUG=1. A configuration error
 * already says where the problem is and what to do, so its message is printed as it is.
 */
export function formatFailure(error: unknown, verbose = false): string {
  return errorLine(error, { verbose, stack: Boolean(process.env.BUB_DEBUG) });
}

/**
 * commander's usage error (`error: unknown option '--x'`, maybe followed by
 * `(Did you mean --y?)`) as one line: `bub: unknown option '--x' (did you mean --y?) — run
 * \`bub run --help\` for usage`.
 */
export function usageLine(text: string, commandPath: string): string {
  const lines = text.trim().split("\n").map((line) => line.trim()).filter(Boolean);
  const what = (lines[0] ?? "usage error").replace(/^error: /, "").replace(/\.$/, "");
  const hint = lines.slice(1).map((line) => line.replace(/^\((.*)\)$/, "$1")).join(" ");
  const suggestion = hint ? ` (${hint.charAt(0).toLowerCase()}${hint.slice(1)})` : "";
  return `bub: ${what}${suggestion} — run \`${commandPath} --help\` for usage\n`;
}

/**
 * Builds the commander program: global options, then the plugins' commands. With `argv`,
 * plugins learn which command will run (see {@link commandFromArgs}) and may skip the rest.
 */
export async function createProgram(framework: BubFramework, io: CliIO, argv?: readonly string[]): Promise<Command> {
  const app = new Command("bub");
  const defaults = app.configureOutput();
  // commander's own help width and colour answers, except that they read `process.stdout`
  // only when stdout is not a plain file or pipe (where it is no TTY: no width, no colour).
  const output: OutputConfiguration = {
    writeOut: (text) => io.stdout.write(text),
    writeErr: (text) => io.stderr.write(text),
    // No width is commander's 80 columns, as when it finds no terminal.
    getOutHelpWidth: () => (stdoutIsPlain() ? undefined : defaults.getOutHelpWidth?.()) ?? 80,
    getOutHasColors: () => (stdoutIsPlain() ? (colorFromEnv() ?? false) : (defaults.getOutHasColors?.() ?? false)),
  };
  app
    .description("Bub: a hook-first runtime for AI agents that live alongside people")
    .version(packageVersion(), "-V, --version", "print the version")
    .option("-w, --workspace <path>", "directory the agent works in (default: the current directory)")
    .option("--verbose", "add the causes of an error to its message")
    .configureOutput({ ...output, outputError: (text, write) => write(usageLine(text, "bub")) })
    .exitOverride();
  app.hook("preAction", (command) => {
    const workspace: unknown = command.opts().workspace;
    if (typeof workspace === "string" && workspace) framework.workspace = resolve(workspace);
  });
  const command = argv ? commandFromArgs(argv) : undefined;
  framework.runtime.callSync("registerCliCommands", command === undefined ? { app } : { app, command });
  if (app.commands.length === 0) {
    app.command("help").description("show help").action(() => {
      io.stdout.write("No CLI command loaded.\n");
    });
  }
  // Not when another command that was built runs (commandFromArgs names none for `completion`).
  if (!app.commands.some((each) => each.name() === "completion" || each.name() === command)) {
    app
      .command("completion")
      .description("print a completion script for bash, zsh or fish")
      .addArgument(new Argument("<shell>", "the shell").choices(["bash", "zsh", "fish"]))
      .addHelpText("after", "\nExamples:\n  $ bub completion bash > ~/.local/share/bash-completion/completions/bub\n  $ bub completion zsh > ~/.zfunc/_bub\n  $ bub completion fish > ~/.config/fish/completions/bub.fish")
      .action(async (shell: string) => {
        const { completionScript } = await import("./completion.ts");
        io.stdout.write(completionScript(app, shell));
      });
  }
  const configure = (command: Command, path: string) => {
    command.exitOverride().configureOutput({ ...output, outputError: (text, write) => write(usageLine(text, path)) });
    for (const sub of command.commands) configure(sub, `${path} ${sub.name()}`);
  };
  for (const command of app.commands) configure(command, `bub ${command.name()}`);
  return app;
}

/** Commands that keep state under `BUB_HOME` (tapes, history, config): it must be a writable folder. */
const HOME_COMMANDS = new Set(["run", "chat", "gateway", "onboard", "replay"]);

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
  const verbose = verboseFromArgs(argv);
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
    if (cwdTrusted) await loadDotEnv(dotEnv);
  } catch (error) {
    io.stderr.write(formatFailure(error, verbose));
    return EXIT.failure;
  }
  const command = commandFromArgs(argv);
  // The gateway's stderr is its running log (a line per message): gathered, not a write per line.
  const batch = command === "gateway" ? stderrBatch(io.stderr) : null;
  const out: CliIO = batch ? { ...io, stderr: batch } : io;
  // Records go to <BUB_HOME>/logs/bub.log (created at the first one) and, when asked for, stderr.
  const logging = installCliLogging({ home: bubHome(process.env), command, env: process.env, stderr: out.stderr });
  try {
    return await runProgram(argv, out, { workspace, workspaceTrusted, cwd, cwdTrusted, command, verbose, turnSink: logging.turnSink });
  } finally {
    logging.restore();
    batch?.close();
    await logging.file.close();
  }
}

/** What {@link main} found out before building the program. */
interface StartFacts {
  workspace: string;
  workspaceTrusted: boolean;
  cwd: string;
  cwdTrusted: boolean;
  command: string | undefined;
  verbose: boolean;
  /** Where the framework's own records go besides the log file (see installCliLogging). */
  turnSink: LogSink | null;
}

async function runProgram(argv: readonly string[], io: CliIO, facts: StartFacts): Promise<number> {
  const { workspace, workspaceTrusted, cwd, cwdTrusted, command, verbose, turnSink } = facts;
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
    // The agent (model layer, tools) is loaded only for the commands that run turns, not for their help.
    const agent = command !== undefined && commandNeedsAgent(command) && !asksForHelp(argv);
    framework = await createBub({ workspace, agent, trustWorkspace: workspaceTrusted, onUntrustedWorkspace: (found) => skipped.push(found) });
    if (turnSink) framework.setLogSink(turnSink);
    const notice = command === "trust" ? null : untrustedNotice(workspace, skipped[0] ?? null, cwdTrusted ? null : cwd);
    if (notice) io.stderr.write(notice);
    app = await createProgram(framework, io, argv);
  } catch (error) {
    io.stderr.write(formatFailure(error, verbose));
    return EXIT.failure;
  }
  try {
    await app.parseAsync([...argv], { from: "user" });
    return typeof process.exitCode === "number" ? process.exitCode : EXIT.ok;
  } catch (error) {
    const code = commanderCode(error);
    if (code !== null) {
      if (["commander.helpDisplayed", "commander.version", "commander.help"].includes(code)) return EXIT.ok;
      return EXIT.usage;
    }
    io.stderr.write(formatFailure(error, verbose));
    return EXIT.failure;
  } finally {
    // Connections and child processes plugins keep for the process (MCP servers) end with the command.
    await framework.shutdown();
  }
}
