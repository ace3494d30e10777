/** Agent Skills: SKILL.md discovery, validation, body rendering and the prompt block. */
export {
  bundledSkillsDir,
  clearSkillCache,
  DEFAULT_SKILL_MAX_AGE_MS,
  discoverSkills,
  LEGACY_SKILLS_DIR,
  PROJECT_SKILLS_DIR,
  SKILL_FILE_NAME,
  type Skill,
  type SkillDiscoveryOptions,
  type SkillSource,
} from "./discovery.ts";
export {
  frontmatterProblem,
  MAX_SKILL_DESCRIPTION_LENGTH,
  MAX_SKILL_NAME_LENGTH,
  parseFrontmatter,
  SKILL_NAME_PATTERN,
  stripFrontmatter,
  type FrontmatterResult,
} from "./frontmatter.ts";
export {
  filterAllowedSkills,
  renderConfigTemplates,
  renderSkillBody,
  renderSkillsPrompt,
  skillHints,
  substituteSkillVariables,
  type ConfigLookup,
} from "./render.ts";
export { buildSkillsPrompt, type SkillsPromptOptions } from "./prompt.ts";
