/**
 * `bash`, `bash.output` and `bash.kill`: run shell commands in the session's sandbox, in
 * the foreground (with a timeout) or in the background (polled by id).
 */
import { z } from "zod";
import { durationSeconds } from "../../config/duration.ts";
import { BubError } from "../../kernel/errors.ts";
import type { Sandbox } from "../../kernel/sandbox.ts";
import type { RuntimeAgent } from "../runtime-agent.ts";
import { defineTool, type Tool } from "../tool.ts";
import { sandboxOf } from "./context.ts";
import type { ManagedShell, ShellManager } from "./shell-manager.ts";
import { DEFAULT_SHELL_OUTPUT_MAX_BYTES } from "./shell-output.ts";

/** Default foreground timeout of `bash`, in seconds. */
export const DEFAULT_COMMAND_TIMEOUT_SECONDS = 30;

/** How long `bash.output` waits for an exited shell's pipes to drain. */
const DRAIN_MS = 2_000;

type Outcome = "closed" | "timeout" | "aborted";

function waitForShell(shell: ManagedShell, timeoutMs: number, signal: AbortSignal | undefined): Promise<Outcome> {
  if (signal?.aborted) return Promise.resolve("aborted");
  return new Promise<Outcome>((resolve) => {
    const timer = setTimeout(() => finish("timeout"), timeoutMs);
    const onAbort = () => finish("aborted");
    signal?.addEventListener("abort", onAbort, { once: true });
    void shell.closed.then(() => finish("closed"));
    function finish(outcome: Outcome): void {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      resolve(outcome);
    }
  });
}

/** The working directory of a command: `cwd` resolved in the sandbox, else its workspace. */
async function resolveCwd(sandbox: Sandbox, cwd: string | null | undefined): Promise<string> {
  const target = cwd && cwd.trim() ? sandbox.resolvePath(cwd) : sandbox.workspace;
  const info = await sandbox.stat(target).catch(() => null);
  if (!info) throw new BubError("invalid_input", `working directory does not exist: ${target}`);
  if (info.kind !== "directory") throw new BubError("invalid_input", `working directory is not a directory: ${target}`);
  return target;
}

/** The agent's `bash_output_max_bytes`, else `BUB_BASH_OUTPUT_MAX_BYTES`, else the default (1 MiB). */
function outputMaxBytes(agent: RuntimeAgent | undefined): number {
  const value = agent?.configValue("bash_output_max_bytes") ?? process.env.BUB_BASH_OUTPUT_MAX_BYTES;
  const number = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  return typeof number === "number" && Number.isSafeInteger(number) && number > 0 ? number : DEFAULT_SHELL_OUTPUT_MAX_BYTES;
}

/** `id: ..\nstatus: ..\nexit_code: ..` lines shared by `bash.output` and `bash.kill`. */
function statusLines(shell: ManagedShell): string {
  return `id: ${shell.id}\nstatus: ${shell.status}\nexit_code: ${shell.exitCode ?? "null"}`;
}

/** The three shell tools over one {@link ShellManager}. */
export function bashTools(shells: ShellManager): Tool[] {
  const bash = defineTool({
    name: "bash",
    description:
      "Run a shell command in the workspace and return its output (stdout and stderr together; " +
      "past 1 MiB by default only the first and the last half are kept). " +
      "With background=true it keeps running and returns a shell id to poll with bash_output and stop with bash_kill.",
    parameters: () => z.object({
      cmd: z.string().describe("The command line, run by bash (or sh)."),
      cwd: z.string().nullable().optional().describe("Working directory; default the workspace."),
      timeout_seconds: durationSeconds({ integer: true }).default(DEFAULT_COMMAND_TIMEOUT_SECONDS).describe("Foreground time limit in seconds."),
      background: z.boolean().default(false).describe("Run in the background and return a shell id."),
    }),
    context: true,
    async run({ cmd, cwd, timeout_seconds, background }, context) {
      const { state, signal } = context;
      // The sandbox gives the command its environment: the host's is this process's without its secrets.
      const sandbox = sandboxOf(context);
      const directory = await resolveCwd(sandbox, cwd);
      const sessionId = state.session_id ?? null;
      const shell = shells.start({ cmd, cwd: directory, sessionId, background, sandbox, maxOutputBytes: outputMaxBytes(context.agent) });
      if (background) return `started: ${shell.id}`;
      const outcome = await waitForShell(shell, timeout_seconds * 1000, signal);
      try {
        if (outcome === "aborted") {
          await shells.terminate(shell.id);
          throw signal?.reason ?? new DOMException("The operation was aborted.", "AbortError");
        }
        if (outcome === "timeout") {
          await shells.terminate(shell.id);
          return `command timed out after ${timeout_seconds} seconds and was terminated`;
        }
      } finally {
        shells.release(shell.id);
      }
      const output = shell.output.trim();
      if (shell.exitCode !== 0) {
        throw new BubError("tool", `command exited with code ${shell.exitCode}\noutput:\n${output || "(no output)"}`);
      }
      return output || "(no output)";
    },
  });

  const output = defineTool({
    name: "bash.output",
    description:
      "Read the output of a background shell started by bash. Pass offset=next_offset from the previous call to read only what is new.",
    parameters: () => z.object({
      shell_id: z.string().describe("The id bash returned, e.g. bash-1a2b3c4d."),
      offset: z.number().int().default(0).describe("Character offset to start from."),
      limit: z.number().int().nullable().optional().describe("Most characters to return; default all."),
    }),
    async run({ shell_id, offset, limit }) {
      const shell = shells.get(shell_id);
      // Once the shell has exited, let its pipes drain (bounded: a leftover child may hold them).
      if (shell.status === "exited") await waitForShell(shell, DRAIN_MS, undefined);
      // Read the status before the output: output that arrives in between is seen next time.
      const status = statusLines(shell);
      // Offsets count the whole output: a read that reaches output cut from the bounded buffer gets a notice.
      const { text, next } = shell.read(offset, limit);
      if (shell.status === "exited") shells.markPolled(shell.id);
      const chunk = text.trimEnd();
      return `${status}\nnext_offset: ${next}\noutput:\n${chunk || "(no output)"}`;
    },
  });

  const kill = defineTool({
    name: "bash.kill",
    description: "Stop a background shell and everything it started.",
    parameters: () => z.object({ shell_id: z.string().describe("The id bash returned.") }),
    async run({ shell_id }) {
      const shell = await shells.terminate(shell_id);
      shells.markPolled(shell.id);
      return statusLines(shell);
    },
  });

  return [bash, output, kill];
}
