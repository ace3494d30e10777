// A small executor process for sandbox tests: `node sandbox-executor.ts <root>` performs
// file and shell operations inside <root>, which it presents as the file system's root
// (`/workspace/a.txt` is `<root>/workspace/a.txt`; nothing outside <root> is reachable by
// path). It speaks JSON lines on stdio: requests `{ id, op, ... }`, answers
// `{ id, ok, result | error }`, and process events `{ event, proc, ... }`. When its stdin
// ends it kills every process group it started and exits.
import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, mkdirSync } from "node:fs";
import { lstat, mkdir, open, realpath, stat, writeFile } from "node:fs/promises";
import { constants, type Stats } from "node:fs";
import { dirname, join, posix, relative, sep } from "node:path";
import { createInterface } from "node:readline";

const root = process.argv[2];
if (!root) {
  process.stderr.write("usage: sandbox-executor.ts <root>\n");
  process.exit(2);
}
mkdirSync(join(root, "workspace"), { recursive: true });
/** Every operation, one line each, for tests to see what went through the executor. */
const journal = join(root, ".executor-journal");

function hostPath(path: string): string {
  if (!posix.isAbsolute(path)) throw Object.assign(new Error(`not an absolute path: ${path}`), { code: "EINVAL" });
  return join(root!, posix.normalize(path));
}

function sandboxPath(path: string): string {
  const inside = relative(root!, path);
  if (inside.startsWith("..")) throw Object.assign(new Error(`${path} leads out of the sandbox`), { code: "EACCES" });
  return `/${inside.split(sep).join("/")}`;
}

function kindOf(info: Stats): string {
  if (info.isFile()) return "file";
  if (info.isDirectory()) return "directory";
  if (info.isFIFO()) return "fifo";
  if (info.isSocket()) return "socket";
  if (info.isCharacterDevice() || info.isBlockDevice()) return "device";
  return "other";
}

const processes = new Map<number, ChildProcess>();

function send(message: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

type Request = { id: number; op: string; path?: string; offset?: number; length?: number; content?: string; proc?: number; command?: string; cwd?: string; signal?: NodeJS.Signals };

async function perform(request: Request): Promise<unknown> {
  appendFileSync(journal, `${request.op} ${request.path ?? request.command ?? request.proc ?? ""}\n`);
  switch (request.op) {
    case "stat": {
      const path = hostPath(request.path!);
      const link = await lstat(path).catch(() => null);
      if (!link) return null;
      const target = link.isSymbolicLink() ? await stat(path).catch(() => null) : link;
      return target ? { kind: kindOf(target), size: target.size, symbolicLink: link.isSymbolicLink() } : null;
    }
    case "read": {
      const file = await open(hostPath(request.path!), constants.O_RDONLY | constants.O_NONBLOCK);
      try {
        if (!(await file.stat()).isFile()) throw Object.assign(new Error(`${request.path} is not a regular file`), { code: "EISDIR" });
        const buffer = Buffer.alloc(request.length!);
        const { bytesRead } = await file.read(buffer, 0, buffer.length, request.offset!);
        return buffer.subarray(0, bytesRead).toString("base64");
      } finally {
        await file.close();
      }
    }
    case "write": {
      const path = hostPath(request.path!);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, request.content!, "utf8");
      return null;
    }
    case "realpath":
      return sandboxPath(await realpath(hostPath(request.path!)));
    case "exec": {
      const child = spawn("bash", ["-c", request.command!], {
        cwd: hostPath(request.cwd!),
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: hostPath("/workspace"), BUB_SANDBOX: "executor" },
      });
      const proc = request.proc!;
      processes.set(proc, child);
      let open = 2;
      for (const stream of ["stdout", "stderr"] as const) {
        child[stream]!.on("data", (chunk: Buffer) => send({ event: "output", proc, stream, data: chunk.toString("base64") }));
        child[stream]!.once("close", () => {
          if (--open === 0) send({ event: "closed", proc });
        });
      }
      child.once("exit", (code, signal) => {
        send({ event: "exit", proc, code: code ?? (signal === "SIGKILL" ? -9 : signal === "SIGTERM" ? -15 : -1) });
      });
      child.once("error", (error) => send({ event: "exit", proc, code: 127, message: error.message }));
      return child.pid ?? null;
    }
    case "kill": {
      const child = processes.get(request.proc!);
      if (child?.pid !== undefined) {
        try {
          process.kill(-child.pid, request.signal!);
        } catch {
          // gone already
        }
      }
      return null;
    }
    case "closeOutput": {
      const child = processes.get(request.proc!);
      child?.stdout?.destroy();
      child?.stderr?.destroy();
      return null;
    }
    default:
      throw new Error(`unknown op ${request.op}`);
  }
}

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const request = JSON.parse(line) as Request;
  perform(request).then(
    (result) => send({ id: request.id, ok: true, result }),
    (error: NodeJS.ErrnoException) => send({ id: request.id, ok: false, error: { message: error.message, code: error.code ?? null } }),
  );
});
lines.on("close", () => {
  for (const child of processes.values()) {
    if (child.pid === undefined) continue;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // gone already
    }
  }
  process.exit(0);
});
