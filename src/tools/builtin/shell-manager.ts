/**
 * Shells started by the `bash` tool: each runs in its own process group, its stdout and
 * stderr are decoded as UTF-8 streams into one interleaved buffer, and it belongs to the
 * session that started it (so `quit` stops only that session's shells).
 *
 * Departures from the reference (spec §15.14): a finished background shell stays readable
 * after the poll that sees it exit, for a retention period; termination signals the whole
 * process group; output decoding never splits a character across reads.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { PASSTHROUGH_VARIABLE, toolEnvironment } from "../../config/redaction.ts";
import { randomBytes } from "node:crypto";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { BubError } from "../../kernel/errors.ts";
import { createLogger } from "../../kernel/log.ts";

const log = createLogger("bub:tools");

/** How long a finished shell stays readable after the first poll that saw it exit. */
export const DEFAULT_SHELL_RETENTION_MS = 10 * 60_000;
/** How long a terminated shell gets between SIGTERM and SIGKILL. */
export const DEFAULT_KILL_GRACE_MS = 3_000;
/** Most finished shells kept at once; the oldest finished ones go first. */
const MAX_FINISHED_SHELLS = 64;

/** `running` until the shell's main process exits. */
export type ShellStatus = "running" | "exited";

/** One shell as the tools see it. */
export interface ManagedShell {
  /** `bash-<8 hex>`. */
  readonly id: string;
  readonly cmd: string;
  readonly cwd: string;
  /** The session that started it, or null. */
  readonly sessionId: string | null;
  /** Process id of the shell, which is also its process group id. */
  readonly pid: number | undefined;
  readonly status: ShellStatus;
  /** Exit code; a shell ended by a signal reports minus the signal number (as Python does). */
  readonly exitCode: number | null;
  /** Everything the shell wrote to stdout and stderr so far, in arrival order. */
  readonly output: string;
  /** Resolves when the main process has exited and both output streams are closed. */
  readonly closed: Promise<void>;
}

/** Options of {@link createShellManager}. */
export interface ShellManagerOptions {
  /** Default {@link DEFAULT_SHELL_RETENTION_MS}. */
  retentionMs?: number;
  /** Default {@link DEFAULT_KILL_GRACE_MS}. */
  killGraceMs?: number;
  /** The shell binary; default `bash` from PATH, else `/bin/sh`. */
  shell?: string;
}

/** Starts, tracks and stops shells. */
export interface ShellManager {
  /**
   * Spawns `cmd` through the shell in `cwd`, in a new process group. A `background` shell
   * does not keep the process alive: it is killed when the process exits. `env` is the
   * command's environment (default: this process's without its secrets, see
   * {@link toolEnvironment}).
   */
  start(options: { cmd: string; cwd: string; sessionId?: string | null; background?: boolean; env?: NodeJS.ProcessEnv }): ManagedShell;
  /**
   * The shell with this id.
   * @throws BubError `not_found` `unknown shell id: <id>`.
   */
  get(id: string): ManagedShell;
  /** Marks a shell as read after exit: it is forgotten once the retention period ends. */
  markPolled(id: string): void;
  /**
   * Forgets a shell at once (foreground shells, once their result is returned) and SIGKILLs
   * what is left of its process group (children it put in the background, `nohup` included).
   */
  release(id: string): void;
  /** Stops a shell's whole process group: SIGTERM, then SIGKILL after the grace period. */
  terminate(id: string): Promise<ManagedShell>;
  /** Stops every running shell of a session; returns how many it stopped. */
  terminateSession(sessionId: string): Promise<number>;
  /** Stops every running shell, and SIGKILLs what is left of the groups of exited ones. */
  terminateAll(): Promise<void>;
  /**
   * SIGKILLs the process group of every known shell at once, running or exited (a finished
   * background shell's children may still run), for process exit, where nothing can be awaited.
   */
  killAllSync(): void;
  /** Ids of the shells currently known (running or retained). */
  ids(): string[];
}

function findShell(): string {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, "bash");
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return "/bin/sh";
}

const SIGNAL_NUMBERS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15 };

class Shell implements ManagedShell {
  readonly id: string;
  readonly cmd: string;
  readonly cwd: string;
  readonly sessionId: string | null;
  readonly closed: Promise<void>;
  readonly child: ChildProcess;
  status: ShellStatus = "running";
  exitCode: number | null = null;
  finishedAt = 0;
  retention: NodeJS.Timeout | null = null;
  readonly #chunks: string[] = [];
  readonly exited: Promise<void>;

  constructor(id: string, cmd: string, cwd: string, sessionId: string | null, shell: string, env: NodeJS.ProcessEnv) {
    this.id = id;
    this.cmd = cmd;
    this.cwd = cwd;
    this.sessionId = sessionId;
    this.child = spawn(shell, ["-c", cmd], { cwd, detached: true, stdio: ["ignore", "pipe", "pipe"], env });
    const streams = [this.child.stdout!, this.child.stderr!].map(
      (stream) =>
        new Promise<void>((resolve) => {
          const decoder = new TextDecoder("utf-8", { fatal: false });
          stream.on("data", (chunk: Buffer) => {
            const text = decoder.decode(chunk, { stream: true });
            if (text) this.#chunks.push(text);
          });
          const finish = () => {
            const rest = decoder.decode();
            if (rest) this.#chunks.push(rest);
            resolve();
          };
          stream.once("close", finish);
          stream.once("error", finish);
        }),
    );
    this.exited = new Promise<void>((resolve) => {
      const done = (code: number | null, signal: NodeJS.Signals | null) => {
        if (this.status === "exited") return resolve();
        this.status = "exited";
        this.exitCode = code ?? (signal ? -(SIGNAL_NUMBERS[signal] ?? 1) : -1);
        this.finishedAt = Date.now();
        resolve();
      };
      this.child.once("exit", done);
      this.child.once("error", (error) => {
        this.#chunks.push(`failed to start shell: ${error.message}\n`);
        done(127, null);
      });
    });
    this.closed = Promise.all([this.exited, ...streams]).then(() => undefined);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get output(): string {
    if (this.#chunks.length > 1) this.#chunks.splice(0, this.#chunks.length, this.#chunks.join(""));
    return this.#chunks[0] ?? "";
  }

  signalGroup(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // The group is gone already.
    }
  }
}

function onceSettled(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

class DefaultShellManager implements ShellManager {
  readonly #shells = new Map<string, Shell>();
  readonly #retentionMs: number;
  readonly #killGraceMs: number;
  readonly #shell: string | undefined;

  constructor(options: ShellManagerOptions) {
    this.#retentionMs = options.retentionMs ?? DEFAULT_SHELL_RETENTION_MS;
    this.#killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
    this.#shell = options.shell;
  }

  start({ cmd, cwd, sessionId = null, background = false, env }: { cmd: string; cwd: string; sessionId?: string | null; background?: boolean; env?: NodeJS.ProcessEnv }): ManagedShell {
    let id: string;
    do id = `bash-${randomBytes(4).toString("hex")}`;
    while (this.#shells.has(id));
    const shell = new Shell(id, cmd, cwd, sessionId, this.#shell ?? findShell(), env ?? toolEnvironment(process.env, process.env[PASSTHROUGH_VARIABLE]));
    this.#shells.set(id, shell);
    if (background) {
      // A one-shot `bub run` must be able to end while a background shell runs; the exit
      // handler below then kills it.
      shell.child.unref();
      (shell.child.stdout as { unref?: () => void } | null)?.unref?.();
      (shell.child.stderr as { unref?: () => void } | null)?.unref?.();
    }
    registerExitCleanup();
    void shell.exited.then(() => this.#pruneFinished());
    return shell;
  }

  #find(id: string): Shell {
    const shell = this.#shells.get(id.trim());
    if (!shell) throw new BubError("not_found", `unknown shell id: ${id}`);
    return shell;
  }

  get(id: string): ManagedShell {
    return this.#find(id);
  }

  markPolled(id: string): void {
    const shell = this.#shells.get(id);
    if (!shell || shell.status !== "exited" || shell.retention) return;
    shell.retention = setTimeout(() => this.#forget(shell), this.#retentionMs);
    shell.retention.unref();
  }

  release(id: string): void {
    const shell = this.#shells.get(id);
    if (!shell) return;
    // The group outlives the shell while any member runs (its id is not reused until then).
    shell.signalGroup("SIGKILL");
    this.#forget(shell);
  }

  #forget(shell: Shell): void {
    if (shell.retention) clearTimeout(shell.retention);
    if (this.#shells.get(shell.id) === shell) this.#shells.delete(shell.id);
  }

  async terminate(id: string): Promise<ManagedShell> {
    const shell = this.#find(id);
    if (shell.status === "running") {
      shell.signalGroup("SIGTERM");
      if (!(await onceSettled(shell.exited, this.#killGraceMs))) {
        log.warn(`shell.kill id=${id} reason=ignored_sigterm`);
        shell.signalGroup("SIGKILL");
        await shell.exited;
      }
    }
    // Children that outlived the main process would keep the pipes open: end them too.
    if (!(await onceSettled(shell.closed, 0))) {
      shell.signalGroup("SIGKILL");
      // A process that left the group may still hold the pipes: stop reading them.
      if (!(await onceSettled(shell.closed, this.#killGraceMs))) {
        shell.child.stdout?.destroy();
        shell.child.stderr?.destroy();
        await shell.closed;
      }
    }
    return shell;
  }

  async terminateSession(sessionId: string): Promise<number> {
    const running = [...this.#shells.values()].filter((shell) => shell.sessionId === sessionId && shell.status === "running");
    await Promise.all(running.map((shell) => this.terminate(shell.id).catch(() => undefined)));
    return running.length;
  }

  async terminateAll(): Promise<void> {
    const running = [...this.#shells.values()].filter((shell) => shell.status === "running");
    for (const shell of this.#shells.values()) if (shell.status === "exited") shell.signalGroup("SIGKILL");
    await Promise.all(running.map((shell) => this.terminate(shell.id).catch(() => undefined)));
  }

  killAllSync(): void {
    for (const shell of this.#shells.values()) shell.signalGroup("SIGKILL");
  }

  ids(): string[] {
    return [...this.#shells.keys()];
  }

  #pruneFinished(): void {
    const finished = [...this.#shells.values()].filter((shell) => shell.status === "exited").sort((a, b) => a.finishedAt - b.finishedAt);
    for (const shell of finished.slice(0, Math.max(0, finished.length - MAX_FINISHED_SHELLS))) this.#forget(shell);
  }
}

const managers = new Set<DefaultShellManager>();
let cleanupRegistered = false;

function registerExitCleanup(): void {
  if (cleanupRegistered) return;
  cleanupRegistered = true;
  process.once("exit", () => {
    for (const manager of managers) manager.killAllSync();
  });
}

/**
 * A new {@link ShellManager}. Every manager's running shells are killed when the process
 * exits.
 *
 * ```ts
 * const shells = createShellManager({ killGraceMs: 500 });
 * const shell = shells.start({ cmd: "sleep 5", cwd: process.cwd(), sessionId: "cli:local" });
 * await shells.terminate(shell.id);
 * ```
 */
export function createShellManager(options: ShellManagerOptions = {}): ShellManager {
  const manager = new DefaultShellManager(options);
  managers.add(manager);
  return manager;
}

let defaultManager: ShellManager | null = null;

/** The process-wide shell manager the builtin tools use. */
export function defaultShellManager(): ShellManager {
  return (defaultManager ??= createShellManager());
}

/** Stops every running shell of every manager (SIGTERM, then SIGKILL after the grace period). */
export async function terminateAllShells(): Promise<void> {
  await Promise.all([...managers].map((manager) => manager.terminateAll()));
}
