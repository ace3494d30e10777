/**
 * One shell command of the host sandbox as a {@link SandboxProcess}: started through the
 * machine's {@link HostLauncher} (its own PID namespace where possible) in a new process
 * group, with its output streamed and its exit code reported the way the tools expect.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { Socket } from "node:net";
import type { SandboxCommand, SandboxOutputStream, SandboxProcess } from "../kernel/sandbox.ts";
import type { HostLauncher } from "./host-isolation.ts";

const SIGNAL_NUMBERS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15 };

/** What {@link execOnHost} needs: the launcher, or a promise of it while the machine is still probed. */
export type LauncherSource = HostLauncher | Promise<HostLauncher>;

/**
 * The exit code to report: minus the signal number for a process ended by a signal. In a
 * namespace the command's own end by signal N arrives as exit code 128 + N (the namespace's
 * first process cannot die of it), so that code counts as the signal when `bub` sent it.
 */
export function exitCodeOf(code: number | null, signal: NodeJS.Signals | null, sent: ReadonlySet<number>): number {
  if (code === null) return signal ? -(SIGNAL_NUMBERS[signal] ?? 1) : -1;
  return code > 128 && sent.has(code - 128) ? -(code - 128) : code;
}

/**
 * Runs `command` through `shell`, started by the launcher, with `env`, in a new process
 * group. While the launcher is still being probed, the start waits for it; a signal sent
 * before the start means the command never starts.
 */
export function execOnHost(launcher: LauncherSource, shell: string, env: NodeJS.ProcessEnv, command: SandboxCommand, onOutput: (chunk: Uint8Array, stream: SandboxOutputStream) => void): SandboxProcess {
  let child: ChildProcess | undefined;
  let cancelled: "SIGTERM" | "SIGKILL" | null = null;
  // A SIGTERM asked for before the command can take it (see HostLauncher.announcesReady).
  let ready = true;
  let heldTerm = false;
  let outputClosed = false;
  const sent = new Set<number>();
  let settleExit: (code: number) => void = () => {};
  let settleStreams: () => void = () => {};
  const exited = new Promise<number>((resolve) => (settleExit = resolve));
  const streamsClosed = new Promise<void>((resolve) => (settleStreams = resolve));

  const start = (chosen: HostLauncher) => {
    if (cancelled) {
      settleExit(-(SIGNAL_NUMBERS[cancelled] ?? 1));
      settleStreams();
      return;
    }
    const [file, ...args] = chosen.argv(shell, command.command);
    const started = spawn(file, args, { cwd: command.cwd, detached: true, stdio: ["ignore", "pipe", "pipe", chosen.announcesReady ? "pipe" : "ignore"], env });
    child = started;
    const readiness = started.stdio[3];
    if (chosen.announcesReady && readiness instanceof Socket) {
      ready = false;
      readiness.once("data", () => {
        ready = true;
        readiness.destroy();
        if (heldTerm) signalGroup(started, "SIGTERM");
      });
      readiness.once("error", () => {});
      if (command.background) readiness.unref();
    }
    const streams = (["stdout", "stderr"] as const).map((name) => {
      const stream = started[name];
      if (!stream) return Promise.resolve();
      return new Promise<void>((resolve) => {
        stream.on("data", (chunk: Buffer) => onOutput(chunk, name));
        stream.once("close", resolve);
        stream.once("error", () => resolve());
      });
    });
    void Promise.all(streams).then(() => settleStreams());
    started.once("exit", (code, signal) => settleExit(exitCodeOf(code, signal, sent)));
    started.once("error", (error) => {
      onOutput(Buffer.from(`failed to start shell: ${error.message}\n`), "stderr");
      settleExit(127);
    });
    if (command.background) {
      // A one-shot `bub run` must be able to end while a background shell runs.
      started.unref();
      // Piped stdio streams are sockets; their handles would keep the process alive too.
      for (const stream of [started.stdout, started.stderr]) if (stream instanceof Socket) stream.unref();
    }
    if (outputClosed) closeStreams(started);
  };
  if ("then" in launcher) void launcher.then(start);
  else start(launcher);

  return {
    get pid() {
      return child?.pid;
    },
    exited,
    closed: Promise.all([exited, streamsClosed]).then(() => undefined),
    kill(signal) {
      sent.add(SIGNAL_NUMBERS[signal] ?? 0);
      if (!child) {
        cancelled = signal;
        return;
      }
      if (signal === "SIGTERM" && !ready) heldTerm = true;
      else signalGroup(child, signal);
    },
    closeOutput() {
      outputClosed = true;
      if (child) closeStreams(child);
      else settleStreams();
    },
  };
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is gone already.
  }
}

function closeStreams(child: ChildProcess): void {
  child.stdout?.destroy();
  child.stderr?.destroy();
}
