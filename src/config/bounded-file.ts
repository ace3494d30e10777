/**
 * Reading the files bub reads on its own (AGENTS.md, config.yml, .env, package.json,
 * trust.json, the schedule store, ...) with a size bound and only when they are regular files.
 *
 * The file is opened non-blocking, so a FIFO never waits for a writer, and its kind and size
 * come from `fstat` on the opened descriptor, not from a separate `stat` that a swap could
 * outrun. At most `maxBytes + 1` bytes are read: `/dev/zero` behind a symlink is refused as a
 * device before the first byte, and a file that grew past its `fstat` size is still caught.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";
import { open } from "node:fs/promises";
import { BubError } from "../kernel/errors.ts";

/**
 * The bound of the small files bub reads on its own: `config.yml`, `.env`, `package.json`
 * (the workspace's, its dependencies', a plugin's), `trust.json`, the MCP configs, the Codex
 * login and the schedule's job files. What they hold fits in far less.
 */
export const SETTINGS_FILE_MAX_BYTES = 1024 * 1024;

/** What {@link readBoundedFile} needs to know about a file. */
export interface BoundedReadOptions {
  /** The most bytes accepted; a larger file is refused. */
  readonly maxBytes: number;
  /** How the file is named in the error: `AGENTS.md`, `config.yml`, `the .env file`. */
  readonly what: string;
  /** What to do about a file that is too large; default `shorten it`. */
  readonly tooLargeFix?: string;
}

/** Why a file was refused: not a regular file, or larger than its bound. */
export type FileRefusal = "not_regular" | "too_large";

/**
 * A file bub refused to read. The message is one line naming the file, what is wrong and
 * what to do: `AGENTS.md at /w/AGENTS.md is not a regular file (a FIFO) — replace it with a
 * regular file or remove it`, `config.yml at /h/config.yml is 64 MiB, over the 1 MiB bound for
 * config.yml — shorten it`.
 */
export class FileRefusedError extends BubError {
  readonly path: string;
  readonly refusal: FileRefusal;

  constructor(path: string, refusal: FileRefusal, message: string) {
    super("invalid_input", message, { details: { path, refusal } });
    this.name = "FileRefusedError";
    this.path = path;
    this.refusal = refusal;
  }
}

/** `bytes` (at least 1024) in the largest of `units` (steps of 1024, from the kilo unit) that keeps it at 1 or more. */
export function scaledBytes(bytes: number, units: readonly string[]): { value: number; unit: string } {
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return { value, unit: units[unit] ?? "" };
}

/** `512 B`, `256 KiB`, `64 MiB`, `1.5 GiB`. */
export function formatByteSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const { value, unit } = scaledBytes(bytes, ["KiB", "MiB", "GiB", "TiB"]);
  const shown = Number.isInteger(value) || value >= 10 ? String(Math.floor(value)) : value.toFixed(1);
  return `${shown} ${unit}`;
}

function kindName(info: Stats): string {
  if (info.isDirectory()) return "a directory";
  if (info.isFIFO()) return "a FIFO";
  if (info.isSocket()) return "a socket";
  if (info.isCharacterDevice()) return "a character device";
  if (info.isBlockDevice()) return "a block device";
  return "not a regular file";
}

function notRegular(path: string, info: Stats, options: Pick<BoundedReadOptions, "what">): FileRefusedError {
  return new FileRefusedError(path, "not_regular", `${options.what} at ${path} is not a regular file (${kindName(info)}) — replace it with a regular file or remove it`);
}

/**
 * Checks what `fstat` said of a descriptor.
 * @throws FileRefusedError unless it is a regular file.
 */
function assertRegularFile(path: string, info: Stats, what: string): void {
  if (!info.isFile()) throw notRegular(path, info, { what });
}

/**
 * Opens `path` read-only without blocking (a FIFO returns at once) and returns the descriptor
 * of what is there, a regular file, for a caller that reads it its own way (by lines, in chunks).
 * @throws FileRefusedError when it is not a regular file; the open error itself otherwise.
 */
export function openRegularFileSync(path: string, what: string): number {
  const fd = openSync(path, READ_FLAGS);
  try {
    assertRegularFile(path, fstatSync(fd), what);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return fd;
}

/** `size` null: the file grew past the bound while it was read, so its size is not known. */
function tooLarge(path: string, size: number | null, options: BoundedReadOptions): FileRefusedError {
  const bound = formatByteSize(options.maxBytes);
  const shown = size === null ? null : formatByteSize(size) === bound ? `${size} bytes` : formatByteSize(size);
  return new FileRefusedError(
    path,
    "too_large",
    `${options.what} at ${path} is ${shown === null ? "" : `${shown}, `}over the ${bound} bound for ${options.what} — ${options.tooLargeFix ?? "shorten it"}`,
  );
}

/** Non-blocking read-only: opening a FIFO returns at once instead of waiting for a writer. */
const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/** How many bytes one read asks for at most: a small file costs no buffer of the whole bound. */
const CHUNK_BYTES = 64 * 1024;

/** The kind and size check made on the opened descriptor, before anything is read. */
function check(path: string, info: Stats, options: BoundedReadOptions): void {
  if (!info.isFile()) throw notRegular(path, info, options);
  if (info.size > options.maxBytes) throw tooLarge(path, info.size, options);
}

/** The chunks read so far, as one buffer; refused once they pass the bound (a file that grew since `fstat`). */
function joined(path: string, chunks: Buffer[], total: number, options: BoundedReadOptions): Buffer {
  if (total > options.maxBytes) throw tooLarge(path, null, options);
  return Buffer.concat(chunks, total);
}

/**
 * The bytes of the regular file at `path`, at most `options.maxBytes` of them.
 * @throws FileRefusedError for a directory, FIFO, socket or device (symlinks are followed, so
 *   a link to `/dev/zero` is a device) and for a file larger than the bound.
 * @throws the open error itself (`ENOENT`, `EACCES`, ...), so callers keep their own
 *   handling of a missing file.
 */
export async function readBoundedFile(path: string, options: BoundedReadOptions): Promise<Buffer> {
  const handle = await open(path, READ_FLAGS);
  try {
    check(path, await handle.stat(), options);
    const chunks: Buffer[] = [];
    let total = 0;
    while (total <= options.maxBytes) {
      const buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, options.maxBytes + 1 - total));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, total);
      if (bytesRead === 0) break;
      chunks.push(buffer.subarray(0, bytesRead));
      total += bytesRead;
    }
    return joined(path, chunks, total, options);
  } finally {
    await handle.close();
  }
}

/** {@link readBoundedFile} as UTF-8 text. */
export async function readBoundedTextFile(path: string, options: BoundedReadOptions): Promise<string> {
  return (await readBoundedFile(path, options)).toString("utf8");
}

/**
 * {@link readBoundedTextFile}, synchronously: only for the few reads that cannot wait today
 * (a synchronous hook's first read, the `.env` loaded before anything else).
 */
export function readBoundedTextFileSync(path: string, options: BoundedReadOptions): string {
  const fd = openSync(path, READ_FLAGS);
  try {
    check(path, fstatSync(fd), options);
    const chunks: Buffer[] = [];
    let total = 0;
    while (total <= options.maxBytes) {
      const buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, options.maxBytes + 1 - total));
      const count = readSync(fd, buffer, 0, buffer.length, total);
      if (count === 0) break;
      chunks.push(buffer.subarray(0, count));
      total += count;
    }
    return joined(path, chunks, total, options).toString("utf8");
  } finally {
    closeSync(fd);
  }
}
