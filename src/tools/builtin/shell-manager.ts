/**
 * Shells started by the `bash` tool, each through the session's sandbox (the host by
 * default): each runs in its own process group, its stdout and
 * stderr are decoded as UTF-8 streams into one interleaved buffer, and it belongs to the
 * session that started it (so `quit` stops only that session's shells).
 *
 * Departures from the reference (spec §15.14): a finished background shell stays readable
 * after the poll that sees it exit, for a retention period; termination signals the whole
 * process group; output decoding never splits a character across reads; the output kept is
 * bounded (./shell-output.ts: the first and the last half of `bash_output_max_bytes`).
 */
import { randomBytes } from "node:crypto";
import { BubError } from "../../kernel/errors.ts";
import { createLogger } from "../../kernel/log.ts";
import type { Sandbox, SandboxProcess } from "../../kernel/sandbox.ts";
import { createHostSandbox } from "../sandbox-host.ts";
import { BoundedOutput, DEFAULT_SHELL_OUTPUT_MAX_BYTES, type OutputRead } from "./shell-output.ts";

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
  /**
   * What the shell wrote to stdout and stderr so far, in arrival order; past the bound, the
   * first and the last half of it with a notice of how many bytes and lines were cut between.
   */
  readonly output: string;
  /** The most UTF-8 bytes of output kept. */
  readonly maxOutputBytes: number;
  /**
   * The output from `offset` (a UTF-16 position in the whole output, cut parts counted), at
   * most `limit` characters; a notice stands in for output that was cut. `next` is where the
   * next read starts.
   */
  read(offset: number, limit?: number | null): OutputRead;
  /** Resolves when the main process has exited and both output streams are closed. */
  readonly closed: Promise<void>;
}

/** Options of {@link createShellManager}. */
export interface ShellManagerOptions {
  /** Default {@link DEFAULT_SHELL_RETENTION_MS}. */
  retentionMs?: number;
  /** Default {@link DEFAULT_KILL_GRACE_MS}. */
  killGraceMs?: number;
  /** The shell binary of the host sandbox used when `start` is given none; default `bash` from PATH, else `/bin/sh`. */
  shell?: string;
  /** Most bytes of output kept per shell when `start` is given none; default {@link DEFAULT_SHELL_OUTPUT_MAX_BYTES}. */
  maxOutputBytes?: number;
}

/** What {@link ShellManager.start} takes. */
export interface ShellStartOptions {
  cmd: string;
  cwd: string;
  sessionId?: string | null;
  background?: boolean;
  sandbox?: Sandbox;
  /** Most bytes of output kept (the first and the last half); default the manager's. */
  maxOutputBytes?: number;
}

/** Starts, tracks and stops shells. */
export interface ShellManager {
  /**
   * Starts `cmd` through `sandbox`'s shell in `cwd` (a path of that sandbox), in a new
   * process group. A `background` shell does not keep the process alive: it is killed when
   * the process exits. Default sandbox: the host, whose commands get this process's
   * environment without its secrets. The output kept is bounded by `maxOutputBytes`.
   */
  start(options: ShellStartOptions): ManagedShell;
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

class Shell implements ManagedShell {
  readonly id: string;
  readonly cmd: string;
  readonly cwd: string;
  readonly sessionId: string | null;
  readonly closed: Promise<void>;
  readonly process: SandboxProcess;
  status: ShellStatus = "running";
  exitCode: number | null = null;
  finishedAt = 0;
  retention: NodeJS.Timeout | null = null;
  readonly #output: BoundedOutput;
  readonly exited: Promise<void>;

  constructor(id: string, cmd: string, cwd: string, sessionId: string | null, sandbox: Sandbox, background: boolean, maxOutputBytes: number) {
    this.id = id;
    this.cmd = cmd;
    this.cwd = cwd;
    this.sessionId = sessionId;
    const output = (this.#output = new BoundedOutput(maxOutputBytes));
    // One decoder per stream: a character split across chunks is never split in the text.
    const decoders = { stdout: new TextDecoder("utf-8", { fatal: false }), stderr: new TextDecoder("utf-8", { fatal: false }) };
    this.process = sandbox.exec({ command: cmd, cwd, background }, (chunk, stream) => {
      output.push(decoders[stream].decode(chunk, { stream: true }));
    });
    this.exited = this.process.exited.then((code) => {
      this.status = "exited";
      this.exitCode = code;
      this.finishedAt = Date.now();
    });
    this.closed = Promise.all([this.exited, this.process.closed]).then(() => {
      for (const decoder of Object.values(decoders)) output.push(decoder.decode());
    });
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  get output(): string {
    return this.#output.text();
  }

  get maxOutputBytes(): number {
    return this.#output.maxBytes;
  }

  read(offset: number, limit?: number | null): OutputRead {
    return this.#output.read(offset, limit);
  }

  signalGroup(signal: "SIGTERM" | "SIGKILL"): void {
    this.process.kill(signal);
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
  readonly #maxOutputBytes: number;
  #hostSandbox: Sandbox | undefined;

  constructor(options: ShellManagerOptions) {
    this.#retentionMs = options.retentionMs ?? DEFAULT_SHELL_RETENTION_MS;
    this.#killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
    this.#shell = options.shell;
    this.#maxOutputBytes = options.maxOutputBytes ?? DEFAULT_SHELL_OUTPUT_MAX_BYTES;
  }

  start({ cmd, cwd, sessionId = null, background = false, sandbox, maxOutputBytes }: ShellStartOptions): ManagedShell {
    let id: string;
    do id = `bash-${randomBytes(4).toString("hex")}`;
    while (this.#shells.has(id));
    // A background shell does not keep a one-shot `bub run` alive; the exit handler below kills it.
    const shell = new Shell(id, cmd, cwd, sessionId, sandbox ?? (this.#hostSandbox ??= createHostSandbox({ shell: this.#shell })), background, maxOutputBytes ?? this.#maxOutputBytes);
    this.#shells.set(id, shell);
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
        shell.process.closeOutput();
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
