/**
 * Writing to stdout without creating `process.stdout` when fd 1 is a regular file, or (on
 * Linux) a pipe, a socket or /dev/null. Creating the stream costs 4–6 ms (it loads net and
 * the streams), more than `bub --help` spends on anything else. The bytes are the same: Node
 * writes to a file or /dev/null synchronously, and to a pipe or socket at once unless it is
 * full, queuing the rest; here a full pipe blocks the write instead, and the process waits
 * for its reader either way before exiting. A TTY (which needs the stream for its width) or
 * anything else goes through `process.stdout`, and so does the rest of a write that fails
 * (EAGAIN on a non-blocking pipe, EPIPE), so Node's own handling applies.
 */
import { EventEmitter } from "node:events";

let plain: boolean | undefined;

/** True when fd 1 is a regular file, or a pipe, socket or /dev/null on Linux (never a TTY). */
export function stdoutIsPlain(): boolean {
  if (plain === undefined) {
    try {
      const fs = process.getBuiltinModule("node:fs");
      const stat = fs.fstatSync(1);
      plain =
        stat.isFile() ||
        (process.platform === "linux" &&
          (stat.isFIFO() || stat.isSocket() || (stat.isCharacterDevice() && stat.rdev === fs.statSync("/dev/null").rdev)));
    } catch {
      plain = false;
    }
  }
  return plain;
}

/** Writes `text` to stdout (see above). */
export function writeStdout(text: string): void {
  if (!stdoutIsPlain()) {
    process.stdout.write(text);
    return;
  }
  const fs = process.getBuiltinModule("node:fs");
  let rest = Buffer.from(text, "utf8");
  try {
    while (rest.length > 0) rest = rest.subarray(fs.writeSync(1, rest));
  } catch (error) {
    if (isClosedPipe(error)) readerGone();
    plain = false; // from now on, and for the rest of this text, Node's stream handles it
    process.stdout.write(rest);
  }
}

/** True for the error of a write to a pipe whose reader has gone (`bub hooks | head -1`). */
export function isClosedPipe(error: unknown): boolean {
  const code = typeof error === "object" && error !== null && "code" in error ? error.code : undefined;
  return code === "EPIPE" || code === "ERR_STREAM_DESTROYED";
}

/**
 * The reader of stdout has gone: the rest of the output has nobody to read it, so the
 * command ends at once, quietly and with status 0, as a Unix filter does on SIGPIPE
 * (Node ignores that signal, and would otherwise print an EPIPE stack trace).
 */
function readerGone(): never {
  process.exit(0);
}

/**
 * Makes a closed stdout pipe end the command quietly (see {@link readerGone}), for every
 * writer of `process.stdout`. The stream is created lazily by Node and costs several
 * milliseconds, so the listener is added when something first asks for it, not here.
 */
export function endQuietlyOnClosedStdout(): void {
  const descriptor = Object.getOwnPropertyDescriptor(process, "stdout");
  if (!descriptor?.get || !descriptor.configurable) return;
  const create = descriptor.get;
  let watched = false;
  Object.defineProperty(process, "stdout", {
    configurable: true,
    enumerable: descriptor.enumerable,
    get() {
      const stream: unknown = create.call(process);
      if (!watched && stream instanceof EventEmitter) {
        watched = true;
        stream.on("error", (error) => {
          if (isClosedPipe(error)) readerGone();
          throw error;
        });
      }
      return stream;
    },
  });
}

/** commander's `useColor()` (not exported): colour forced on or off by the environment. */
export function colorFromEnv(env: NodeJS.ProcessEnv = process.env): boolean | undefined {
  if (env.NO_COLOR || env.FORCE_COLOR === "0" || env.FORCE_COLOR === "false") return false;
  if (env.FORCE_COLOR || env.CLICOLOR_FORCE !== undefined) return true;
  return undefined;
}
