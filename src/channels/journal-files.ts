/**
 * The file operations of the inbound journal (./inbound-journal.ts), all asynchronous
 * (`node:fs/promises`): nothing the journal does after it was opened blocks the event loop.
 * Tests pass their own {@link JournalFiles} to count the writes and syncs, or to hold a sync
 * and see that nothing is acknowledged before it ends.
 */
import { open, rename } from "node:fs/promises";
import { errorCode } from "../config/thrown.ts";

/** An open journal file: what the journal does with a `FileHandle`. */
export interface JournalFile {
  /** Writes from `buffer[offset]` on (at the end of a file opened to append). */
  write(buffer: Uint8Array, offset: number): Promise<{ bytesWritten: number }>;
  datasync(): Promise<void>;
  close(): Promise<void>;
}

/** The file-system calls of the journal. */
export interface JournalFiles {
  /** Opens `path` (`"a"` to append, `"w"` to write a new file) with `mode` when it is created. */
  open(path: string, flags: "a" | "w", mode: number): Promise<JournalFile>;
  rename(from: string, to: string): Promise<void>;
  /** Makes the entries of `directory` durable (a rename into it survives a power loss). */
  syncDirectory(directory: string): Promise<void>;
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

/** The real file system, through `node:fs/promises`. */
export const nodeJournalFiles: JournalFiles = { open, rename, syncDirectory };

/** Writes all of `bytes` to `file` (a write may take fewer bytes than it was given). */
export async function writeAll(file: JournalFile, bytes: Uint8Array): Promise<void> {
  for (let offset = 0; offset < bytes.length; ) {
    const { bytesWritten } = await file.write(bytes, offset);
    if (bytesWritten <= 0) throw new Error("the file took no bytes (is the disk full?)");
    offset += bytesWritten;
  }
}
