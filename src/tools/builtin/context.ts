/**
 * What the builtin tools need from their {@link ToolContext}: the session tape, the
 * workspace directory and paths resolved against it.
 */
import { isAbsolute, resolve } from "node:path";
import { expandHome } from "../../config/paths.ts";
import { BubError } from "../../kernel/errors.ts";
import type { TurnState } from "../../kernel/types.ts";
import type { Tape } from "../../tape/index.ts";
import { runtimeAgentOf } from "../runtime-agent.ts";
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
 * A path given to a tool, made absolute: `~` expanded, absolute paths kept (normalized),
 * relative ones resolved against the workspace. Paths outside the workspace are allowed.
 * @throws BubError `invalid_input` for a relative path when no workspace is known.
 */
export function resolveToolPath(state: TurnState, raw: string): string {
  const path = expandHome(raw.trim());
  if (isAbsolute(path)) return resolve(path);
  const workspace = workspaceOf(state);
  if (workspace === null) throw new BubError("invalid_input", `relative path '${raw}' is not allowed without a workspace`);
  return resolve(workspace, path);
}
