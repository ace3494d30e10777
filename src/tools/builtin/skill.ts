/** The `skill` tool: lists the workspace's skills or loads one's instructions. */
import { z } from "zod";
import type { SkillDiscoveryOptions } from "../../skills/discovery.ts";
import { defineTool, type Tool } from "../tool.ts";
import { workspaceOrCwd } from "./context.ts";

function allowedOf(value: readonly string[] | undefined): string[] | null {
  return value?.map((item) => item.toLowerCase()) ?? null;
}

/** The `skill` tool; `discovery` overrides where global and bundled skills are looked for. */
export function skillTools(discovery: SkillDiscoveryOptions = {}): Tool[] {
  return [
    defineTool({
      name: "skill",
      description: "Load a skill's instructions by name (with its location). Without a name, list the available skills.",
      parameters: () => z.object({ name: z.string().nullable().optional().describe("Skill name; omit to list the skills.") }),
      context: true,
      async run({ name }, context) {
        const { state } = context;
        const allowed = allowedOf(state.allowed_skills);
        const wanted = name?.trim() || null;
        if (allowed && wanted && !allowed.includes(wanted.toLowerCase())) return `(skill '${wanted}' is not allowed in this context)`;
        // Discovery parses SKILL.md files (YAML): loaded when the tool is called.
        const [{ discoverSkills }, { filterAllowedSkills, renderSkillBody }] = await Promise.all([import("../../skills/discovery.ts"), import("../../skills/render.ts")]);
        const configured = context.agent?.configValue("skill_max_bytes");
        const maxBytes = discovery.maxBytes ?? (typeof configured === "number" ? configured : undefined);
        // A call of the tool is rare and explicit: it scans afresh (maxAgeMs 0), so a skill the
        // model has just written is found, and the next model step reuses this scan.
        const skills = filterAllowedSkills(await discoverSkills(workspaceOrCwd(context), { maxAgeMs: 0, ...discovery, maxBytes }), allowed);
        if (wanted === null) {
          return skills.length === 0 ? "Available skills:\n(none)" : `Available skills:\n${skills.map((skill) => `- ${skill.name}`).join("\n")}`;
        }
        const skill = skills.find((candidate) => candidate.name.toLowerCase() === wanted.toLowerCase());
        if (!skill) return "(no such skill)";
        const { agent } = context;
        const body = await renderSkillBody(skill, { config: agent ? (path) => agent.configValue(path) : null, maxBytes });
        return `Location: ${skill.location}\n---\n${body || "(no content)"}`;
      },
    }),
  ];
}
