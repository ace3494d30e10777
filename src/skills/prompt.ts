/** The skills part of the system prompt for one model step. */
import { discoverSkills, type SkillDiscoveryOptions } from "./discovery.ts";
import { filterAllowedSkills, renderSkillsPrompt, skillHints, type ConfigLookup } from "./render.ts";

/** Options of {@link buildSkillsPrompt}. */
export interface SkillsPromptOptions extends SkillDiscoveryOptions {
  /** The session's workspace directory. */
  workspace: string;
  /** Skill names this run may see (null or omitted: all). */
  allowedSkills?: Iterable<string> | null;
  /** Resolves `${config.x.y}` in expanded bodies. */
  config?: ConfigLookup | null;
}

/**
 * Discovers the workspace's skills, keeps the allowed ones and renders the
 * `<available_skills>` block, expanding each skill the prompt mentions as `$name` (the
 * `$<channel>` marker in a message's context expands that channel's skill).
 *
 * ```ts
 * const block = buildSkillsPrompt(promptText, { workspace, allowedSkills: state.allowed_skills, config: (path) => settings.getValue(path, undefined) });
 * ```
 */
export function buildSkillsPrompt(promptText: string, options: SkillsPromptOptions): string {
  const skills = filterAllowedSkills(discoverSkills(options.workspace, options), options.allowedSkills);
  return renderSkillsPrompt(skills, { expanded: skillHints(promptText), config: options.config, maxBytes: options.maxBytes });
}
