/**
 * The `subagent` tool: runs the agent loop in-process on another session (a fresh
 * `temp/<id>`, the current one, or a named one) with a restricted set of tools and skills.
 * A subagent never gets the `subagent` tool itself.
 */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { BubError } from "../../kernel/errors.ts";
import type { Prompt, PromptPart } from "../../kernel/envelope.ts";
import type { TurnState } from "../../kernel/types.ts";
import { defineTool, type Tool } from "../tool.ts";
import { assertSessionAllowed } from "./session-access.ts";

/** This tool's name, always removed from a subagent's tools. */
export const SUBAGENT_TOOL_NAME = "subagent";

/** The session a subagent runs on: `inherit` → the current one, `temp` → `temp/<8 hex>`, else as given. */
export function subagentSessionId(session: string, state: TurnState): string {
  if (session === "inherit") return state.session_id || "temp/unknown";
  if (session === "temp") return `temp/${randomBytes(4).toString("hex")}`;
  return session;
}

function isPromptPart(part: Record<string, unknown>): part is PromptPart {
  return typeof part.type === "string";
}

/** The task as the agent takes it; a message part without a string `type` is left out, as the model call would drop it. */
function subagentPrompt(prompt: string | Record<string, unknown>[]): Prompt {
  return typeof prompt === "string" ? prompt : prompt.filter(isPromptPart);
}

/** The `subagent` tool. */
export function subagentTools(): Tool[] {
  return [
    defineTool({
      name: SUBAGENT_TOOL_NAME,
      description:
        "Run a task with a sub-agent and return its reply. session: 'temp' (default, a fresh throwaway session), " +
        "'inherit' (this session's history) or a session id (outside the local CLI, not another chat's). allowed_tools / allowed_skills restrict what it may use.",
      parameters: () => z.object({
        prompt: z
          .union([z.string(), z.array(z.record(z.string(), z.unknown()))])
          .describe("The task: a string, or a list of message parts."),
        model: z.string().nullable().optional().describe("provider:model for the sub-agent; default the current model."),
        session: z.string().default("temp").describe("'temp', 'inherit' or a session id."),
        allowed_tools: z.array(z.string()).nullable().optional().describe("Tool names the sub-agent may use; default all."),
        allowed_skills: z.array(z.string()).nullable().optional().describe("Skill names the sub-agent may use; default all."),
      }),
      context: true,
      async run(args, context) {
        const { state, signal, agent } = context;
        if (!agent) throw new BubError("tool", "no runtime agent found in tool context");
        const exclude = agent.tools.has(SUBAGENT_TOOL_NAME) ? [SUBAGENT_TOOL_NAME] : [];
        const requested = args.allowed_tools && args.allowed_tools.length > 0 ? args.allowed_tools : null;
        // Throws for unknown names before anything runs.
        const allowedTools = [...agent.tools.resolveToolNames(requested, exclude)];
        const session = args.session.trim() || "temp";
        // In a channel turn another chat's `<channel>:<chat id>` is refused (docs/security.md).
        if (session !== "temp" && session !== "inherit") assertSessionAllowed(SUBAGENT_TOOL_NAME, session, context);
        const sessionId = subagentSessionId(session, state);
        const childState: TurnState = { ...state, session_id: sessionId };
        const stream = await agent.runStream(sessionId, subagentPrompt(args.prompt), childState, {
          model: args.model ?? null,
          allowedTools,
          allowedSkills: args.allowed_skills ?? null,
          signal,
        });
        let output = "";
        for await (const event of stream) {
          if (event.kind === "text") output += event.data.delta;
          else if (event.kind === "error") output += `[Error: ${event.data.message || "unknown error"}]`;
        }
        return output;
      },
    }),
  ];
}
