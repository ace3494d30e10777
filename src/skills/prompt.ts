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
 * `$<channel>` marker in a message's context expands that channel's skill). Discovery results
 * are reused for `maxAgeMs` (default one second), so skills are re-read at most once a second.
 *
 * ```ts
 * const block = await buildSkillsPrompt(promptText, { workspace, allowedSkills: state.allowed_skills, config: (path) => settings.getValue(path, undefined) });
 * ```
 */
export async function buildSkillsPrompt(promptText: string, options: SkillsPromptOptions): Promise<string> {
  const skills = filterAllowedSkills(await discoverSkills(options.workspace, options), options.allowedSkills);
  return renderSkillsPrompt(skills, { expanded: skillHints(promptText), config: options.config, maxBytes: options.maxBytes });
}
