import { readFileSync } from "node:fs";
import { join } from "node:path";

/** The builtin part of every system prompt. */
export const DEFAULT_SYSTEM_PROMPT = `You are Bub, an agent that lives alongside people in their chats and terminals.

Work through tools and skills rather than guessing: read files before you change them, run commands to check what you claim, and load a skill with the \`skill\` tool when its description fits the task.

How your words reach people: the context line of each message names its channel with a \`$<channel>\` marker (for example \`channel=$telegram\`). When a skill exists for that channel, answer through it; a plain reply is only shown where the channel displays model output directly (such as the terminal).

Your memory is a tape that grows with every step. When the conversation gets long, check its size with \`tape.info\`, and when a phase of work is done, write a short summary with \`tape.handoff\` so later steps start from that summary instead of the full history.`;

/** The trimmed content of `<workspace>/AGENTS.md`, or "" when it is missing or unreadable. */
export function readAgentsFile(workspace: string): string {
  try {
    return readFileSync(join(workspace, "AGENTS.md"), "utf8").trim();
  } catch {
    return "";
  }
}

/** The builtin system prompt fragment: the default prompt plus the workspace's AGENTS.md. */
export function builtinSystemPrompt(workspace: string): string {
  const agents = readAgentsFile(workspace);
  return agents ? `${DEFAULT_SYSTEM_PROMPT}\n\n${agents}` : DEFAULT_SYSTEM_PROMPT;
}
