// A Sandbox over sandbox-executor.ts: every file and shell operation of the builtin tools
// travels as a JSON line to a child Node process that performs it inside its own root.
// Only `import type` from src/, so an installed bub can load it as a plugin too.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, posix } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { BubPlugin } from "../../src/kernel/hooks.ts";
import type { Sandbox, SandboxFileInfo, SandboxOutputStream, SandboxProcess } from "../../src/kernel/sandbox.ts";

const EXECUTOR = fileURLToPath(new URL("./sandbox-executor.ts", import.meta.url));
/** Bytes asked for per `read` request. */
const READ_BYTES = 64 * 1024;

/** An executor sandbox, with what the tests look at. */
export interface ExecutorSandbox extends Sandbox {
  /** The host folder holding the sandbox's files (`/workspace` is `<root>/workspace`). */
  readonly root: string;
  /** The operations the executor performed, one `op argument` line each. */
  journal(): string[];
  /** Ends the executor (and every process it started). */
  close(): Promise<void>;
}

interface Answer {
  id?: number;
  ok?: boolean;
  result?: unknown;
  error?: { message: string; code: string | null };
  event?: "output" | "exit" | "closed";
  proc?: number;
  stream?: SandboxOutputStream;
  data?: string;
  code?: number;
}

interface Running {
  onOutput: (chunk: Uint8Array, stream: SandboxOutputStream) => void;
  exited: (code: number) => void;
  closed: () => void;
  background: boolean;
  /** `exit` and `closed`, until both have come. */
  pendingEvents: number;
}

/**
 * A sandbox whose workspace is `/workspace` inside `root`, served by a child executor
 * process started on the first operation.
 */
export function createExecutorSandbox(root: string): ExecutorSandbox {
  let child: ReturnType<typeof spawn> | null = null;
  let nextId = 1;
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  const running = new Map<number, Running>();

  /** Keeps the bub process alive only while an answer or a foreground command is awaited. */
  function holdIfBusy(): void {
    if (!child) return;
    const busy = pending.size > 0 || [...running.values()].some((entry) => !entry.background);
    const stdout = child.stdout as unknown as { ref(): void; unref(): void };
    if (busy) {
      child.ref();
      stdout.ref();
    } else {
      child.unref();
      stdout.unref();
    }
  }

  function executor(): ReturnType<typeof spawn> {
    if (child) return child;
    const started = spawn(process.execPath, [EXECUTOR, root], { stdio: ["pipe", "pipe", "inherit"] });
    child = started;
    createInterface({ input: started.stdout! }).on("line", (line) => {
      const answer = JSON.parse(line) as Answer;
      if (answer.event) {
        const entry = running.get(answer.proc!);
        if (!entry) return;
        if (answer.event === "output") entry.onOutput(Buffer.from(answer.data!, "base64"), answer.stream!);
        else if (answer.event === "exit") entry.exited(answer.code!);
        else entry.closed();
        // Forgotten once both the exit and the end of its output are in, whichever comes first.
        if (answer.event !== "output" && (entry.pendingEvents -= 1) === 0) {
          running.delete(answer.proc!);
          holdIfBusy();
        }
        return;
      }
      const waiter = pending.get(answer.id!);
      pending.delete(answer.id!);
      holdIfBusy();
      if (!waiter) return;
      if (answer.ok) waiter.resolve(answer.result);
      else waiter.reject(Object.assign(new Error(answer.error!.message), answer.error!.code ? { code: answer.error!.code } : {}));
    });
    (started.stdin as unknown as { unref(): void }).unref();
    return started;
  }

  function request(op: string, fields: Record<string, unknown>): Promise<unknown> {
    const id = nextId++;
    const promise = new Promise<unknown>((resolve, reject) => pending.set(id, { resolve, reject }));
    executor().stdin!.write(`${JSON.stringify({ id, op, ...fields })}\n`);
    holdIfBusy();
    return promise;
  }

  return {
    name: "executor",
    root,
    workspace: "/workspace",
    resolvePath(path) {
      const trimmed = path.trim();
      return posix.isAbsolute(trimmed) ? posix.normalize(trimmed) : posix.join("/workspace", trimmed);
    },
    async stat(path) {
      return (await request("stat", { path })) as SandboxFileInfo | null;
    },
    async *readFile(path) {
      for (let offset = 0; ; ) {
        const chunk = Buffer.from((await request("read", { path, offset, length: READ_BYTES })) as string, "base64");
        if (chunk.length === 0) return;
        offset += chunk.length;
        yield chunk;
      }
    },
    async writeFile(path, content) {
      await request("write", { path, content });
    },
    async realPath(path) {
      return (await request("realpath", { path })) as string;
    },
    exec(command, onOutput): SandboxProcess {
      const proc = nextId++;
      let pid: number | undefined;
      let exitedWith!: (code: number) => void;
      let closedNow!: () => void;
      const exited = new Promise<number>((resolve) => (exitedWith = resolve));
      const closed = new Promise<void>((resolve) => (closedNow = resolve));
      running.set(proc, { onOutput, exited: exitedWith, closed: closedNow, background: command.background === true, pendingEvents: 2 });
      request("exec", { proc, command: command.command, cwd: command.cwd }).then(
        (answer) => (pid = typeof answer === "number" ? answer : undefined),
        (error: Error) => {
          onOutput(Buffer.from(`failed to start shell: ${error.message}\n`), "stderr");
          exitedWith(127);
          running.delete(proc);
          closedNow();
        },
      );
      return {
        get pid() {
          return pid;
        },
        exited,
        closed: Promise.all([exited, closed]).then(() => undefined),
        kill(signal) {
          if (child && running.has(proc)) child.stdin!.write(`${JSON.stringify({ id: nextId++, op: "kill", proc, signal })}\n`);
        },
        closeOutput() {
          void request("closeOutput", { proc }).catch(() => undefined);
        },
      };
    },
    journal() {
      try {
        return readFileSync(join(root, ".executor-journal"), "utf8").trimEnd().split("\n");
      } catch {
        return [];
      }
    },
    async close() {
      const started = child;
      if (!started) return;
      child = null;
      const gone = new Promise<void>((resolve) => started.once("exit", () => resolve()));
      started.stdin!.end();
      await gone;
    },
  };
}

/** A plugin answering `provideSandbox` with `sandbox` for every session. */
export function executorSandboxPlugin(sandbox: Sandbox, seen: { sessionId: string; workspace: string }[] = [], name = "executor-sandbox"): BubPlugin {
  return {
    name,
    provideSandbox(args) {
      seen.push(args);
      return sandbox;
    },
  };
}
