/**
 * What the approval policy asks about: every `bash` call, and `fs.write` / `fs.edit` calls
 * whose file is outside the workspace. Paths are resolved the way the tools resolve them
 * (`~` expanded, relative to the workspace), then through every symbolic link on the way,
 * dangling ones included: a link inside the workspace that points out of it counts as
 * outside, whether its target exists yet or not.
 */
import { isAbsolute, relative, resolve, sep } from "node:path";
import { expandHome } from "../config/paths.ts";
import type { ToolCall } from "../kernel/interception.ts";
import { linkTarget } from "../tools/link-target.ts";

/** Why a call needs the user's yes, and what to show them. */
export interface ApprovalNeed {
  /** `runs a shell command` or `writes outside the workspace`. */
  readonly reason: string;
  /** The command line, or the absolute path written (and where it leads, when through a link). */
  readonly summary: string;
}

/** Tool names as the model calls them (`fs_write`) and as they are registered (`fs.write`). */
const SHELL_TOOLS = new Set(["bash"]);
const WRITE_TOOLS = new Set(["fs_write", "fs.write", "fs_edit", "fs.edit"]);

/** True when `path` is `folder` or inside it. */
function isInside(path: string, folder: string): boolean {
  if (path === folder) return true;
  const rel = relative(folder, path);
  return rel !== "" && !rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel);
}

/** `target` made absolute the way the tools do it: `~` expanded, relative to `workspace`. */
function absolutePath(target: string, workspace: string): string {
  const expanded = expandHome(target.trim());
  return isAbsolute(expanded) ? resolve(expanded) : resolve(workspace, expanded);
}

/**
 * Where a write to `target` (absolute, or relative to `workspace`) lands once every link is
 * followed, and whether that is outside `workspace` (itself taken through its links).
 * @throws BubError `invalid_input` for a path through too many links (a loop).
 */
export async function writeDestination(target: string, workspace: string): Promise<{ path: string; outside: boolean }> {
  const [path, realWorkspace] = await Promise.all([linkTarget(absolutePath(target, workspace)), linkTarget(resolve(workspace))]);
  return { path, outside: !isInside(path, realWorkspace) };
}

/** True when `target` (absolute, or relative to `workspace`) is outside `workspace`, links followed. */
export async function isOutsideWorkspace(target: string, workspace: string): Promise<boolean> {
  return (await writeDestination(target, workspace)).outside;
}

/** A command line for display: the `cmd` argument, with the `cwd` one when given. */
function commandSummary(args: Record<string, unknown>): string {
  const cmd = typeof args.cmd === "string" ? args.cmd : JSON.stringify(args.cmd ?? "");
  const cwd = typeof args.cwd === "string" && args.cwd.trim() !== "" ? ` (in ${args.cwd})` : "";
  return `${cmd}${cwd}`;
}

/**
 * Whether `call` needs the user's approval, run in `workspace`; null when it may run
 * without asking. A write whose path argument is missing or not a string is left to the
 * tool's own validation (it fails before writing anything).
 */
export async function approvalNeed(call: Pick<ToolCall, "tool" | "arguments">, workspace: string): Promise<ApprovalNeed | null> {
  if (SHELL_TOOLS.has(call.tool)) return { reason: "runs a shell command", summary: commandSummary(call.arguments) };
  if (!WRITE_TOOLS.has(call.tool)) return null;
  const path = call.arguments.path;
  if (typeof path !== "string" || path.trim() === "") return null;
  const destination = await writeDestination(path, workspace);
  if (!destination.outside) return null;
  const written = absolutePath(path, workspace);
  const summary = destination.path === written ? written : `${written} (a link to ${destination.path})`;
  return { reason: "writes outside the workspace", summary };
}
