/**
 * What the approval policy asks about: every `bash` call, and `fs.write` / `fs.edit` calls
 * whose file is outside the workspace. Paths are resolved the way the tools resolve them
 * (`~` expanded, relative to the workspace), then through symbolic links: a link inside the
 * workspace that points out of it counts as outside.
 */
import { realpath } from "node:fs/promises";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { expandHome } from "../config/paths.ts";
import type { ToolCall } from "../kernel/interception.ts";

/** Why a call needs the user's yes, and what to show them. */
export interface ApprovalNeed {
  /** `runs a shell command` or `writes outside the workspace`. */
  readonly reason: string;
  /** The command line, or the absolute path written. */
  readonly summary: string;
}

/** Tool names as the model calls them (`fs_write`) and as they are registered (`fs.write`). */
const SHELL_TOOLS = new Set(["bash"]);
const WRITE_TOOLS = new Set(["fs_write", "fs.write", "fs_edit", "fs.edit"]);

/** `path` with symbolic links resolved, as far as it exists (the missing rest appended). */
async function realPathSoFar(path: string): Promise<string> {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    try {
      const real = await realpath(current);
      return missing.length === 0 ? real : resolve(real, ...missing.reverse());
    } catch {
      const parent = dirname(current);
      if (parent === current) return path;
      missing.push(current.slice(parent.length).replace(/^[\\/]+/, ""));
      current = parent;
    }
  }
}

/** True when `path` is `folder` or inside it. */
function isInside(path: string, folder: string): boolean {
  if (path === folder) return true;
  const rel = relative(folder, path);
  return rel !== "" && !rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel);
}

/** True when `target` (absolute, or relative to `workspace`) is outside `workspace`, links followed. */
export async function isOutsideWorkspace(target: string, workspace: string): Promise<boolean> {
  const expanded = expandHome(target.trim());
  const absolute = isAbsolute(expanded) ? resolve(expanded) : resolve(workspace, expanded);
  const [realTarget, realWorkspace] = await Promise.all([realPathSoFar(absolute), realPathSoFar(resolve(workspace))]);
  return !isInside(realTarget, realWorkspace);
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
  if (!(await isOutsideWorkspace(path, workspace))) return null;
  const expanded = expandHome(path.trim());
  return { reason: "writes outside the workspace", summary: isAbsolute(expanded) ? resolve(expanded) : resolve(workspace, expanded) };
}
