/**
 * Promise versions of the few `node:fs` calls a turn makes, built on the callback API.
 * `node:fs/promises` is not part of Node's bootstrap: loading it pulls in its FileHandle,
 * directory, watcher and readline modules (~1.7 ms of a one-shot `bub run`). Errors are
 * the same `ErrnoException`s (`code`, `syscall`, `path`) the promise API rejects with.
 */
import { close, fsync, mkdir as mkdirCallback, open, read, readFile as readFileCallback, stat as statCallback, writeFile as writeFileCallback, type Stats } from "node:fs";

function settle<T>(resolve: (value: T) => void, reject: (error: unknown) => void) {
  return (error: NodeJS.ErrnoException | null, value: T) => (error ? reject(error) : resolve(value));
}

/** `fs.stat` as a promise. */
export function stat(path: string): Promise<Stats> {
  return new Promise((resolve, reject) => statCallback(path, settle(resolve, reject)));
}

/** The whole file as bytes. */
export function readFile(path: string): Promise<Buffer> {
  return new Promise((resolve, reject) => readFileCallback(path, settle(resolve, reject)));
}

/** Writes `text` as UTF-8, replacing the file. */
export function writeFile(path: string, text: string): Promise<void> {
  return new Promise((resolve, reject) => writeFileCallback(path, text, "utf8", (error) => (error ? reject(error) : resolve())));
}

/** Creates a directory and its missing parents. */
export function mkdirp(path: string): Promise<void> {
  return new Promise((resolve, reject) => mkdirCallback(path, { recursive: true }, (error) => (error ? reject(error) : resolve())));
}

/** Opens `path` read-only, runs `use` with the descriptor, and closes it whatever happens. */
function withDescriptor<T>(path: string, use: (fd: number, done: (error: NodeJS.ErrnoException | null, value?: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) =>
    open(path, "r", (openError, fd) => {
      if (openError) return reject(openError);
      use(fd, (error, value) => close(fd, (closeError) => (error ?? closeError ? reject(error ?? closeError) : resolve(value as T))));
    }),
  );
}

/** Up to `length` bytes from the start of the file. */
export function readPrefix(path: string, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  return withDescriptor(path, (fd, done) => read(fd, buffer, 0, length, 0, (error, bytesRead) => done(error, buffer.subarray(0, bytesRead))));
}

/** `fsync` of a file or directory (a directory's fsync makes a new entry in it durable). */
export function fsyncPath(path: string): Promise<void> {
  return withDescriptor(path, (fd, done) => fsync(fd, (error) => done(error)));
}
