/**
 * The host sandbox: the builtin tools' files and shells on this machine, as the `bub`
 * process sees them. What runs when no plugin answers `provideSandbox`.
 */
import { accessSync, constants, type Stats } from "node:fs";
import { lstat, open, stat } from "node:fs/promises";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { directoryProblem, makeDirectoryAsync, SHARED_DIRECTORY_MODE } from "../config/home-dir.ts";
import { expandHome } from "../config/paths.ts";
import { PASSTHROUGH_VARIABLE, toolEnvironment } from "../config/redaction.ts";
import { BubError } from "../kernel/errors.ts";
import type { Sandbox, SandboxFileInfo, SandboxFileKind } from "../kernel/sandbox.ts";
import { execOnHost } from "./host-exec.ts";
import { hostLauncher, plainLauncher, probedLauncher, type HostLauncher } from "./host-isolation.ts";
import { linkTarget } from "./link-target.ts";

/** Options of {@link createHostSandbox}. */
export interface HostSandboxOptions {
  /** The session's workspace; null: relative paths are refused and commands start in the current directory. */
  readonly workspace?: string | null;
  /**
   * The variables a command keeps although they look secret (`tool_env_passthrough`), read
   * at each command; when it answers undefined, `BUB_TOOL_ENV_PASSTHROUGH`.
   */
  readonly envPassthrough?: () => unknown;
  /** The shell binary; default `bash` from PATH, else `/bin/sh`. */
  readonly shell?: string;
  /**
   * Whether commands run isolated in their own PID namespace where the machine allows it
   * (`tool_isolation`), read at each command; when it answers undefined, `BUB_TOOL_ISOLATION`;
   * on unless `false`.
   */
  readonly isolation?: () => unknown;
}

/** The variable that turns the isolation of `bash` commands off (`BUB_TOOL_ISOLATION=false`). */
export const ISOLATION_VARIABLE = "BUB_TOOL_ISOLATION";

/** Whether a `tool_isolation` value (a boolean, or the variable's text) leaves the isolation on. */
export function isolationEnabled(value: unknown): boolean {
  if (typeof value === "boolean") return value;
  if (typeof value !== "string") return true;
  return !/^(false|0|no|off)$/i.test(value.trim());
}

/** How many bytes {@link Sandbox.readFile} reads at a time. */
const READ_CHUNK_BYTES = 64 * 1024;

/**
 * A path given to a tool, made absolute on the host: `~` expanded, absolute paths kept
 * (normalized), relative ones resolved against `workspace`. Paths outside it are allowed.
 * @throws BubError `invalid_input` for a relative path when `workspace` is null.
 */
export function resolveHostPath(workspace: string | null, raw: string): string {
  const path = expandHome(raw.trim());
  if (isAbsolute(path)) return resolve(path);
  if (workspace === null) throw new BubError("invalid_input", `relative path '${raw}' is not allowed without a workspace`);
  return resolve(workspace, path);
}

/** `bash` from PATH, else `/bin/sh`. */
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

function kindOf(info: Stats): SandboxFileKind {
  if (info.isFile()) return "file";
  if (info.isDirectory()) return "directory";
  if (info.isFIFO()) return "fifo";
  if (info.isSocket()) return "socket";
  if (info.isCharacterDevice() || info.isBlockDevice()) return "device";
  return "other";
}

function missing(error: unknown): boolean {
  const code = typeof error === "object" && error !== null && "code" in error ? error.code : undefined;
  return code === "ENOENT" || code === "ENOTDIR";
}

/**
 * Opens `path` non-blocking (a FIFO swapped in after the caller's check must not wait for a
 * writer) and streams it, refusing anything but a regular file.
 */
async function* readHostFile(path: string): AsyncGenerator<Uint8Array, void, undefined> {
  const file = await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const kind = kindOf(await file.stat());
    if (kind === "directory") throw Object.assign(new Error(`EISDIR: illegal operation on a directory, read '${path}'`), { code: "EISDIR" });
    if (kind !== "file") throw new BubError("invalid_input", `${path} is not a regular file`);
    let position = 0;
    for (;;) {
      const buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);
      const { bytesRead } = await file.read(buffer, 0, buffer.length, position);
      if (bytesRead === 0) return;
      position += bytesRead;
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await file.close();
  }
}

/**
 * Writes `content` to where `path` leads once every link is followed (dangling ones too),
 * creating the folders on the way there. The file is opened without following a link in
 * its last name: a link put there after the path was resolved makes the write fail (ELOOP)
 * instead of going wherever the new link points.
 */
async function writeHostFile(path: string, content: string): Promise<void> {
  const real = await linkTarget(path);
  const folder = dirname(real);
  // One level at a time: Node's recursive mkdir never returns where mkdir answers ENOENT (/proc).
  await makeDirectoryAsync(folder, SHARED_DIRECTORY_MODE).catch((error: unknown) => {
    throw new BubError("tool", `cannot create the folder ${folder}: ${directoryProblem(error, folder)}`, { cause: error });
  });
  const file = await open(real, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (constants.O_NOFOLLOW ?? 0), 0o666);
  try {
    await file.writeFile(content, "utf8");
  } finally {
    await file.close();
  }
}

/**
 * The host as a {@link Sandbox}: exactly what the builtin tools did before sandboxes.
 * Commands run in their own process group with this process's environment minus its
 * secrets (docs/security.md, *Secrets*), in their own PID namespace where the machine
 * allows it (src/tools/host-isolation.ts).
 *
 * ```ts
 * const sandbox = createHostSandbox({ workspace: process.cwd() });
 * for await (const chunk of sandbox.readFile(sandbox.resolvePath("README.md"))) console.log(chunk.length);
 * ```
 */
export function createHostSandbox(options: HostSandboxOptions = {}): Sandbox {
  const workspace = options.workspace ?? null;
  const passthrough = () => options.envPassthrough?.() ?? process.env[PASSTHROUGH_VARIABLE];
  const isolated = () => isolationEnabled(options.isolation?.() ?? process.env[ISOLATION_VARIABLE]);
  let shell = options.shell;
  return {
    name: "host",
    workspace: workspace ?? process.cwd(),
    resolvePath: (path) => resolveHostPath(workspace, path),
    async stat(path): Promise<SandboxFileInfo | null> {
      const link = await lstat(path).catch((error: unknown) => (missing(error) ? null : Promise.reject(error)));
      if (!link) return null;
      if (!link.isSymbolicLink()) return { kind: kindOf(link), size: link.size, symbolicLink: false };
      const target = await stat(path).catch((error: unknown) => (missing(error) ? null : Promise.reject(error)));
      // A dangling link: writing through it creates its target.
      return target ? { kind: kindOf(target), size: target.size, symbolicLink: true } : null;
    },
    readFile: readHostFile,
    writeFile: writeHostFile,
    realPath: (path) => linkTarget(path),
    exec(command, onOutput) {
      const chosen = (shell ??= findShell());
      const launcher: HostLauncher | Promise<HostLauncher> = isolated() ? (probedLauncher(chosen) ?? hostLauncher(chosen)) : plainLauncher();
      return execOnHost(launcher, chosen, toolEnvironment(process.env, passthrough()), command, onOutput);
    },
  };
}
