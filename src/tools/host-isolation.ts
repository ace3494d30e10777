/**
 * How the host sandbox starts a shell command so that it cannot reach any `bub` process and
 * does not outlive `bub` (docs/security.md, *Secrets* and *Interrupts and child processes*).
 *
 * On Linux, when util-linux's `setpriv` and `unshare` can do it here, every command runs as
 *
 * ```
 * setpriv --pdeathsig SIGKILL unshare --pid --fork --mount-proc --kill-child=SIGKILL \
 *   [--map-current-user] [setpriv --bounding-set -sys_admin,...] <shell> -c INIT <shell> <command>
 * ```
 *
 * in its own PID namespace with its own `/proc`: no `bub` process is visible in it, so none
 * has an `environ`, `cmdline` or `mem` a command could read, and root inside has lost the
 * capabilities to unmount that `/proc`, to trace or to read raw memory. When `bub` dies
 * (even by SIGKILL) the kernel kills `unshare`, whose `--kill-child` kills the namespace's
 * first process, which takes every process of the namespace with it. That first process is
 * a small shell (INIT) that runs the command as its child: a namespace's first process
 * ignores every signal it has no handler for, so the command itself must not be it, and a
 * SIGTERM sent before the command's shell exists would be lost, so that shell says on file
 * descriptor 3 when it can take one.
 *
 * Elsewhere (no `unshare` or `setpriv`, namespaces refused, not Linux) a command runs as
 * `setpriv --pdeathsig SIGKILL <shell> -c <command>` when `setpriv` works, else as plain
 * `<shell> -c <command>`.
 */
import { spawn } from "node:child_process";

/** How commands are wrapped on this machine: see the module comment. */
export type IsolationKind = "namespace" | "pdeathsig" | "plain";

/** How to start one command of the host sandbox. */
export interface HostLauncher {
  readonly kind: IsolationKind;
  /**
   * Whether the started process writes one byte to its file descriptor 3 once a SIGTERM to
   * its process group reaches the command; until then a SIGTERM must wait.
   */
  readonly announcesReady: boolean;
  /** The program and its arguments that run `command` through `shell`. */
  argv(shell: string, command: string): readonly [string, ...string[]];
}

/**
 * The namespace's first process: runs the command (`$1`) through the shell (`$0`) as its
 * child and exits with its status (128 + N for a command ended by signal N; its own stderr,
 * where a shell reports such an end, goes to /dev/null). The child says
 * on fd 3 that it runs (from then on a SIGTERM to the group ends it), closes fd 3 and
 * becomes the command's shell. Whatever the command leaves running ends with it, when the
 * namespace does.
 */
const INIT = `exec 4>&2 2>/dev/null; "$0" -c '{ printf r >&3; } 2>/dev/null; exec 3>&- 2>&4 4>&- "$0" -c "$1"' "$0" "$1"; exit "$?"`;

/** Capabilities root loses inside the namespace: unmounting `/proc`, tracing, raw memory, kernel modules, BPF and perf. */
const DROPPED_CAPABILITIES = "-sys_admin,-sys_ptrace,-sys_rawio,-sys_module,-bpf,-perfmon";

/** How long the probe of one wrapper may take. */
const PROBE_TIMEOUT_MS = 5_000;

const PLAIN: HostLauncher = { kind: "plain", announcesReady: false, argv: (shell, command) => [shell, "-c", command] };

const PDEATHSIG: HostLauncher = { kind: "pdeathsig", announcesReady: false, argv: (shell, command) => ["setpriv", "--pdeathsig", "SIGKILL", shell, "-c", command] };

/** The namespace wrapper; `userNamespace` adds `--map-current-user` (required when not root). */
function namespaceLauncher(root: boolean, userNamespace: boolean): HostLauncher {
  const prefix = ["--pdeathsig", "SIGKILL", "unshare", "--pid", "--fork", "--mount-proc", "--kill-child=SIGKILL"];
  if (userNamespace) prefix.push("--map-current-user");
  if (root) prefix.push("setpriv", `--bounding-set=${DROPPED_CAPABILITIES}`);
  return { kind: "namespace", announcesReady: true, argv: (shell, command) => ["setpriv", ...prefix, shell, "-c", INIT, shell, command] };
}

/** Whether `launcher` runs `true` through `shell` with exit code 0 here. */
function works(launcher: HostLauncher, shell: string): Promise<boolean> {
  const [file, ...args] = launcher.argv(shell, "true");
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: "ignore", timeout: PROBE_TIMEOUT_MS, killSignal: "SIGKILL" });
    child.once("error", () => resolve(false));
    child.once("exit", (code) => resolve(code === 0));
  });
}

/**
 * The launchers worth trying on this machine, most isolating first: the namespace without a
 * user namespace (root), with one (root in a container that refuses the first, or any other
 * user), then the parent-death signal alone, then nothing.
 */
export function launcherCandidates(platform: NodeJS.Platform, uid: number | undefined): HostLauncher[] {
  if (platform !== "linux") return [PLAIN];
  const root = uid === 0;
  return [...(root ? [namespaceLauncher(true, false)] : []), namespaceLauncher(root, true), PDEATHSIG, PLAIN];
}

/** The first of `candidates` that works with `shell` (the last one is taken untried). */
export async function probeLauncher(candidates: readonly HostLauncher[], shell: string): Promise<HostLauncher> {
  for (const [index, candidate] of candidates.entries()) {
    if (index === candidates.length - 1 || (await works(candidate, shell))) return candidate;
  }
  return PLAIN;
}

/** The launcher of plain `<shell> -c <command>` (isolation turned off). */
export function plainLauncher(): HostLauncher {
  return PLAIN;
}

let probed: { shell: string; launcher: HostLauncher | null; pending: Promise<HostLauncher> } | null = null;

/**
 * The most isolating launcher that works here with `shell`: probed once per process (the
 * first call starts the probe; later calls share it), asynchronously.
 */
export function hostLauncher(shell: string): Promise<HostLauncher> {
  if (probed?.shell === shell) return probed.pending;
  const entry: { shell: string; launcher: HostLauncher | null; pending: Promise<HostLauncher> } = {
    shell,
    launcher: null,
    pending: probeLauncher(launcherCandidates(process.platform, process.getuid?.()), shell).then((launcher) => (entry.launcher = launcher)),
  };
  probed = entry;
  return entry.pending;
}

/** The launcher {@link hostLauncher} found for `shell`, or null while it is still probing (or has not started). */
export function probedLauncher(shell: string): HostLauncher | null {
  return probed?.shell === shell ? probed.launcher : null;
}
