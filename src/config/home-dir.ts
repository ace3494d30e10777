/**
 * Creating Bub's directories without `mkdir -p`'s trap: Node's recursive `mkdirSync` loops
 * for ever, at 100% of a core, on a path where `mkdir` answers ENOENT although the parent
 * exists (`/proc/<name>`, some FUSE and network file systems). {@link makeDirectory} creates
 * one missing level at a time, so any failure is reported once.
 *
 * What bub keeps under `BUB_HOME` (tapes, logs, history, the inbound journal, schedules,
 * settings) is private to the user whatever the umask: folders it creates are
 * {@link PRIVATE_DIRECTORY_MODE} and files it writes {@link PRIVATE_FILE_MODE}.
 */
import { accessSync, closeSync, constants, mkdirSync, openSync, statSync } from "node:fs";
import { mkdir, open, stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { errorCode, errorMessage } from "./thrown.ts";

/**
 * The level above `current`, whose `stat` failed with `error`, to look at next; rethrows an
 * error that does not mean "missing" (ENOTDIR: a level above is a file, walking up finds which).
 */
function parentToCheck(error: unknown, current: string): string {
  const parent = dirname(current);
  if ((errorCode(error) !== "ENOENT" && errorCode(error) !== "ENOTDIR") || parent === current) throw error;
  return parent;
}

function notADirectory(path: string): Error {
  return Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${path}'`), { code: "ENOTDIR", path });
}

/** The mode of every folder bub creates for itself (0700: the owner only). */
export const PRIVATE_DIRECTORY_MODE = 0o700;
/** The mode of every file bub writes under `BUB_HOME` (0600: the owner only). */
export const PRIVATE_FILE_MODE = 0o600;
/** The mode for folders of the user's own (a workspace's): what the umask leaves of 0777. */
export const SHARED_DIRECTORY_MODE = 0o777;

/**
 * Creates `path` and its missing parents, one level at a time (never `recursive: true`),
 * each with `mode` (default {@link PRIVATE_DIRECTORY_MODE}); existing levels are left as they are.
 * @throws the first file-system error, with `path` set to the level that failed; an
 *   existing non-directory gives ENOTDIR.
 */
export function makeDirectory(path: string, mode: number = PRIVATE_DIRECTORY_MODE): void {
  const missing: string[] = [];
  let current = resolve(path);
  for (;;) {
    let info;
    try {
      info = statSync(current);
    } catch (error) {
      missing.push(current);
      current = parentToCheck(error, current);
      continue;
    }
    if (!info.isDirectory()) throw notADirectory(current);
    break;
  }
  for (const directory of missing.reverse()) {
    try {
      mkdirSync(directory, mode);
    } catch (error) {
      if (errorCode(error) === "EEXIST" && statSync(directory, { throwIfNoEntry: false })?.isDirectory()) continue;
      throw error;
    }
  }
}

/** {@link makeDirectory} without blocking: the same one level at a time, for the tools and channels. */
export async function makeDirectoryAsync(path: string, mode: number = PRIVATE_DIRECTORY_MODE): Promise<void> {
  const missing: string[] = [];
  let current = resolve(path);
  for (;;) {
    let info;
    try {
      info = await stat(current);
    } catch (error) {
      missing.push(current);
      current = parentToCheck(error, current);
      continue;
    }
    if (!info.isDirectory()) throw notADirectory(current);
    break;
  }
  for (const directory of missing.reverse()) {
    try {
      await mkdir(directory, mode);
    } catch (error) {
      if (errorCode(error) === "EEXIST" && (await stat(directory).catch(() => null))?.isDirectory()) continue;
      throw error;
    }
  }
}

/**
 * Creates `path` empty with {@link PRIVATE_FILE_MODE} when it does not exist (an existing file
 * is not touched). For files another library creates with the umask's mode, such as a SQLite
 * database, which also gives its `-wal`, `-shm` and `-journal` files the database's mode.
 */
export function createPrivateFile(path: string): void {
  try {
    closeSync(openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, PRIVATE_FILE_MODE));
  } catch (error) {
    if (errorCode(error) !== "EEXIST") throw error;
  }
}

/** {@link createPrivateFile} off the event loop. */
export async function createPrivateFileAsync(path: string): Promise<void> {
  try {
    await (await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, PRIVATE_FILE_MODE)).close();
  } catch (error) {
    if (errorCode(error) !== "EEXIST") throw error;
  }
}

/** Why a directory could not be created, in a few words. */
export function directoryProblem(error: unknown, path: string): string {
  const failed = typeof error === "object" && error !== null && "path" in error && typeof error.path === "string" ? error.path : path;
  switch (errorCode(error)) {
    case "ENOTDIR":
    case "EEXIST":
      return failed === path ? "it is a file, not a folder" : `${failed} is a file, not a folder`;
    case "EACCES":
    case "EPERM":
      return failed === path ? "permission denied" : `permission denied (creating ${failed})`;
    case "EROFS":
      return "the file system is read-only";
    case "ENOSPC":
      return "no space left on the device";
    case "ENOENT":
      return `this file system does not allow creating ${failed}`;
    default:
      return errorMessage(error);
  }
}

/**
 * Makes sure Bub's home `home` is a writable folder, creating it when missing. Returns the
 * one line to print when it is not (`cannot create <path>: <reason> — set BUB_HOME to a
 * writable folder`), or null.
 */
export function homeProblem(home: string): string | null {
  try {
    makeDirectory(home);
    accessSync(home, constants.W_OK | constants.X_OK);
    return null;
  } catch (error) {
    const reason = errorCode(error) === "EACCES" || errorCode(error) === "EPERM" || errorCode(error) === "EROFS" ? directoryProblem(error, home).replace("permission denied", "not writable") : directoryProblem(error, home);
    return `cannot create ${home}: ${reason} — set BUB_HOME to a writable folder`;
  }
}

/** Error codes of a platform or file system whose folders cannot be opened or fsync'ed (Windows, some network mounts). */
const NO_DIRECTORY_SYNC = new Set(["EISDIR", "EPERM", "EACCES", "EINVAL", "ENOTSUP", "EBADF"]);

function cannotSyncDirectory(error: unknown): boolean {
  const code = errorCode(error);
  return typeof code === "string" && NO_DIRECTORY_SYNC.has(code);
}

/** fsyncs a folder, so the renames into it are on disk; a no-op where folders cannot be synced. */
export async function syncDirectory(directory: string): Promise<void> {
  if (process.platform === "win32") return;
  const handle = await open(directory, "r").catch((error: unknown) => {
    if (cannotSyncDirectory(error)) return null;
    throw error;
  });
  if (!handle) return;
  try {
    await handle.sync();
  } catch (error) {
    if (!cannotSyncDirectory(error)) throw error;
  } finally {
    await handle.close();
  }
}
