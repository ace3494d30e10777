/**
 * The builtin tools (spec §7.4): shells, files, the web, the tape, skills, subagents, spill
 * reading and the session commands.
 */
import type { SkillDiscoveryOptions } from "../../skills/discovery.ts";
import type { Tool } from "../tool.ts";
import { bashTools } from "./bash.ts";
import { fsTools } from "./fs.ts";
import { withGeneratedSchema } from "./generated-schema.ts";
import { sessionTools } from "./session.ts";
import { defaultShellManager, type ShellManager } from "./shell-manager.ts";
import { skillTools } from "./skill.ts";
import { subagentTools } from "./subagent.ts";
import { spillTools, tapeTools } from "./tape.ts";
import { webTools } from "./web.ts";

/** Options of {@link builtinTools}. */
export interface BuiltinToolsOptions {
  /** Shells of `bash`, `bash.output`, `bash.kill` and `quit`; default the process-wide manager. */
  shells?: ShellManager;
  /** Where the `skill` tool looks for global and bundled skills. */
  skills?: SkillDiscoveryOptions;
}

/**
 * Every builtin tool, in the order the model sees them.
 *
 * ```ts
 * const registry = createToolRegistry(builtinTools());
 * ```
 */
export function builtinTools(options: BuiltinToolsOptions = {}): Tool[] {
  const shells = options.shells ?? defaultShellManager();
  return [
    ...bashTools(shells),
    ...fsTools(),
    ...skillTools(options.skills),
    ...tapeTools(),
    ...webTools(),
    ...subagentTools(),
    ...spillTools(),
    ...sessionTools(shells),
  ].map(withGeneratedSchema);
}

export { COMMAND_HELP_TEXT } from "./session.ts";
export { DEFAULT_COMMAND_TIMEOUT_SECONDS } from "./bash.ts";
export { FS_READ_MAX_BYTES } from "./fs.ts";
export { DEFAULT_FETCH_HEADERS, DEFAULT_FETCH_TIMEOUT_SECONDS, fetchText } from "./web.ts";
export { SUBAGENT_TOOL_NAME, subagentSessionId } from "./subagent.ts";
export { resolveToolPath, tapeOf, workspaceOf, workspaceOrCwd } from "./context.ts";
export {
  createShellManager,
  defaultShellManager,
  terminateAllShells,
  DEFAULT_KILL_GRACE_MS,
  DEFAULT_SHELL_RETENTION_MS,
  type ManagedShell,
  type ShellManager,
  type ShellManagerOptions,
  type ShellStatus,
} from "./shell-manager.ts";
