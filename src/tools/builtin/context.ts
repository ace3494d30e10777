/**
 * What the builtin tools need from their {@link ToolContext}: the session tape, the
 * sandbox their files and shells live in, the workspace directory and paths resolved
 * against it.
 */
import { resolve } from "node:path";
import { expandHome } from "../../config/paths.ts";
import { BubError } from "../../kernel/errors.ts";
import type { Sandbox } from "../../kernel/sandbox.ts";
import type { TurnState } from "../../kernel/types.ts";
import type { Tape } from "../../tape/index.ts";
import { runtimeAgentOf } from "../runtime-agent.ts";
import { createHostSandbox, resolveHostPath } from "../sandbox-host.ts";
import type { ToolContext } from "../tool.ts";

/**
 * The context's tape.
 * @throws BubError `invalid_input` when the context carries no tape.
 */
export function tapeOf(context: ToolContext): Tape {
  const tape = context.tape as Partial<Tape> | null | undefined;
  if (typeof tape !== "object" || tape === null || typeof tape.appendEvent !== "function") {
    throw new BubError("invalid_input", "This tool needs the session tape, but the tool context has none.");
  }
  return tape as Tape;
}

/** The session's workspace: `_runtime_workspace`, else what the runtime agent says, else null. */
export function workspaceOf(state: TurnState): string | null {
  const workspace = state._runtime_workspace;
  if (typeof workspace === "string" && workspace.trim()) return resolve(expandHome(workspace.trim()));
  const agent = runtimeAgentOf(state);
  return agent ? agent.workspaceOf(state) : null;
}

/** The session's workspace, or the current directory when none is known. */
export function workspaceOrCwd(state: TurnState): string {
  return workspaceOf(state) ?? process.cwd();
}

/**
 * A path given to a tool, made absolute on the host: `~` expanded, absolute paths kept
 * (normalized), relative ones resolved against the workspace. Paths outside the workspace
 * are allowed. The builtin tools resolve through their sandbox instead ({@link sandboxOf}).
 * @throws BubError `invalid_input` for a relative path when no workspace is known.
 */
export function resolveToolPath(state: TurnState, raw: string): string {
  return resolveHostPath(workspaceOf(state), raw);
}

/**
 * Where a tool's files and shells are: the context's sandbox (what `provideSandbox`
 * answered), else the host in the state's workspace, keeping the variables the runtime
 * agent's `tool_env_passthrough` names.
 */
export function sandboxOf(context: ToolContext): Sandbox {
  if (context.sandbox) return context.sandbox;
  const { state } = context;
  const agent = runtimeAgentOf(state);
  return createHostSandbox({ workspace: workspaceOf(state), ...(agent ? { envPassthrough: () => agent.configValue("tool_env_passthrough") } : {}) });
}
