/**
 * Writing to stdout without creating `process.stdout` when fd 1 is a regular file, or a pipe
 * on Linux. Creating the stream costs 4–6 ms (it loads net and the streams), more than
 * `bub --help` spends on anything else; for those outputs Node's stream writes synchronously
 * anyway, so writing to the fd directly keeps the output and its order. A TTY, socket,
 * character device, or a write that fails (EAGAIN, EPIPE) goes through `process.stdout`.
 */
let plain: boolean | undefined;

/** True when fd 1 is a regular file, or a pipe on Linux (never a TTY). */
export function stdoutIsPlain(): boolean {
  if (plain === undefined) {
    try {
      const stat = process.getBuiltinModule("node:fs").fstatSync(1);
      plain = stat.isFile() || (stat.isFIFO() && process.platform === "linux");
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
  } catch {
    plain = false; // from now on, and for the rest of this text, Node's stream handles it
    process.stdout.write(rest);
  }
}

/** commander's `useColor()` (not exported): colour forced on or off by the environment. */
export function colorFromEnv(env: NodeJS.ProcessEnv = process.env): boolean | undefined {
  if (env.NO_COLOR || env.FORCE_COLOR === "0" || env.FORCE_COLOR === "false") return false;
  if (env.FORCE_COLOR || env.CLICOLOR_FORCE !== undefined) return true;
  return undefined;
}
