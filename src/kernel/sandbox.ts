/**
 * Where a session's shell and file tools run: the contract of the `provideSandbox` hook.
 * The builtin `bash`, `bash.output`, `bash.kill`, `quit`, `fs.read`, `fs.write` and
 * `fs.edit` touch files and processes only through a {@link Sandbox}; the default one is
 * the host (src/tools/sandbox-host.ts). Types only: the kernel touches no file itself.
 */

/** What a path names, following symbolic links. */
export type SandboxFileKind = "file" | "directory" | "fifo" | "socket" | "device" | "other";

/** What {@link Sandbox.stat} says of an existing path. */
export interface SandboxFileInfo {
  /** What the path names once symbolic links are followed. */
  readonly kind: SandboxFileKind;
  /** Size in bytes as the file system reports it (0 for some special files). */
  readonly size: number;
  /** Whether the path itself is a symbolic link. */
  readonly symbolicLink: boolean;
}

/** One shell command for {@link Sandbox.exec}. */
export interface SandboxCommand {
  /** The command line, run by the sandbox's shell (`bash -c`, else `sh -c`). */
  readonly command: string;
  /** Absolute working directory, in the sandbox's own paths. */
  readonly cwd: string;
  /** A background command must not keep the bub process alive. */
  readonly background?: boolean;
}

/** Which stream a chunk of {@link Sandbox.exec} output came from. */
export type SandboxOutputStream = "stdout" | "stderr";

/** A running command of a {@link Sandbox}. */
export interface SandboxProcess {
  /** The process (group) id where the sandbox has one; for logs only. */
  readonly pid: number | undefined;
  /**
   * Resolves once the main process has exited, with its exit code; a process ended by a
   * signal reports minus the signal number, one that could not start 127. Never rejects.
   */
  readonly exited: Promise<number>;
  /** Resolves once no more output will be delivered. Never rejects. */
  readonly closed: Promise<void>;
  /**
   * Signals the command and everything it started (its process group). Synchronous and
   * best effort: it must work from a process `exit` handler, and a gone group is no error.
   */
  kill(signal: "SIGTERM" | "SIGKILL"): void;
  /** Stops delivering output and settles `closed` (a leftover child may hold the pipes). */
  closeOutput(): void;
}

/**
 * Where tools run. Every path argument is absolute in the sandbox's own file system (use
 * {@link Sandbox.resolvePath} on what the model gave). File operations reject with an
 * error whose `code` is the Node.js one (`ENOENT`, `EISDIR`, `ENOTDIR`, `EACCES`, `EPERM`)
 * when they have one, so tools word the failure the same way for every sandbox.
 *
 * ```ts
 * const info = await sandbox.stat(sandbox.resolvePath("notes.md"));
 * ```
 */
export interface Sandbox {
  /** A short name for logs and messages (`host`, `docker:abc123`). */
  readonly name: string;
  /** The session's working directory inside the sandbox: commands start here. */
  readonly workspace: string;
  /**
   * A path from the model made absolute: relative paths resolve against the workspace.
   * @throws BubError `invalid_input` for a path the sandbox cannot resolve.
   */
  resolvePath(path: string): string;
  /** What `path` is, or null when nothing exists there. */
  stat(path: string): Promise<SandboxFileInfo | null>;
  /**
   * The bytes of the regular file at `path`, in chunks. Stopping the iteration early (a
   * `break`) must release the file: readers take only what they need of a big file.
   * Refuses anything but a regular file (a FIFO would wait for a writer).
   */
  readFile(path: string): AsyncIterable<Uint8Array>;
  /**
   * Replaces (or creates) the file at `path` with UTF-8 `content`, creating parent folders.
   * Through symbolic links it writes to {@link Sandbox.realPath}'s answer.
   */
  writeFile(path: string, content: string): Promise<void>;
  /**
   * `path` with every symbolic link resolved: where a write to `path` lands. A sandbox
   * should follow a link whose target does not exist yet too (the host does); one that
   * rejects with `ENOENT` for a missing path leaves `fs.write` naming the path as given.
   */
  realPath(path: string): Promise<string>;
  /**
   * Starts `command`; `onOutput` receives its output chunks as they arrive, tagged with
   * their stream. The command's environment is the sandbox's (the host's is the bub
   * process's without its secrets).
   */
  exec(command: SandboxCommand, onOutput: (chunk: Uint8Array, stream: SandboxOutputStream) => void): SandboxProcess;
}
