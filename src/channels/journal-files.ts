/**
 * The file operations of the inbound journal (./inbound-journal.ts), all asynchronous
 * (`node:fs/promises`): nothing the journal does after it was opened blocks the event loop.
 * Tests pass their own {@link JournalFiles} to count the writes and syncs, or to hold a sync
 * and see that nothing is acknowledged before it ends.
 */
import { open, rename } from "node:fs/promises";
import { syncDirectory } from "../config/home-dir.ts";

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
