/**
 * What the builtin tools need from their {@link ToolContext}: the session tape, the
 * sandbox their files and shells live in, the workspace directory and paths resolved
 * against it.
 */
import { resolve } from "node:path";
import { expandHome } from "../../config/paths.ts";
import { BubError } from "../../kernel/errors.ts";
import type { Sandbox } from "../../kernel/sandbox.ts";
import type { TapeHandle } from "../../kernel/tape-contract.ts";
import type { Tape } from "../../tape/index.ts";
import { createHostSandbox, resolveHostPath } from "../sandbox-host.ts";
import type { ToolContext } from "../tool.ts";

/**
 * True when a context's tape is the runtime's {@link Tape} (what the agent hands its tools),
 * not just the kernel's {@link TapeHandle}: it has the methods the builtin tools call.
 */
function isRuntimeTape(tape: TapeHandle): tape is Tape {
  return (
    typeof tape.appendEvent === "function" &&
    typeof tape.handoff === "function" &&
    "query" in tape && typeof tape.query === "function" &&
    "info" in tape && typeof tape.info === "function" &&
    "anchors" in tape && typeof tape.anchors === "function" &&
    "reset" in tape && typeof tape.reset === "function" &&
    "sidecarTapeName" in tape && typeof tape.sidecarTapeName === "function"
  );
}

/**
 * The context's tape.
 * @throws BubError `invalid_input` when the context carries no tape, or a tape that is not the runtime's.
 */
export function tapeOf(context: ToolContext): Tape {
  // A context built by hand may leave the tape out, whatever its type says.
  const tape: TapeHandle | null | undefined = context.tape;
  if (typeof tape !== "object" || tape === null || typeof tape.appendEvent !== "function") {
    throw new BubError("invalid_input", "This tool needs the session tape, but the tool context has none.");
  }
  if (!isRuntimeTape(tape)) throw new BubError("invalid_input", "This tool needs the runtime's session tape, but the tool context has another kind of tape.");
  return tape;
}

/** The session's workspace: the turn's, else null (a context built by hand). */
export function workspaceOf(context: Pick<ToolContext, "turn">): string | null {
  const workspace = context.turn?.workspace.trim();
  return workspace ? resolve(expandHome(workspace)) : null;
}

/** The session's workspace, or the current directory when none is known. */
export function workspaceOrCwd(context: Pick<ToolContext, "turn">): string {
  return workspaceOf(context) ?? process.cwd();
}

/**
 * A path given to a tool, made absolute on the host: `~` expanded, absolute paths kept
 * (normalized), relative ones resolved against the workspace. Paths outside the workspace
 * are allowed. The builtin tools resolve through their sandbox instead ({@link sandboxOf}).
 * @throws BubError `invalid_input` for a relative path when no workspace is known.
 */
export function resolveToolPath(context: Pick<ToolContext, "turn">, raw: string): string {
  return resolveHostPath(workspaceOf(context), raw);
}

/**
 * Where a tool's files and shells are: the context's sandbox (what `provideSandbox`
 * answered), else the host in the turn's workspace, keeping the variables the runtime
 * agent's `tool_env_passthrough` names and isolated unless its `tool_isolation` is false.
 */
export function sandboxOf(context: ToolContext): Sandbox {
  if (context.sandbox) return context.sandbox;
  const { agent } = context;
  return createHostSandbox({
    workspace: workspaceOf(context),
    ...(agent ? { envPassthrough: () => agent.configValue("tool_env_passthrough"), isolation: () => agent.configValue("tool_isolation") } : {}),
  });
}
