import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The builtin part of every system prompt. It has the reference's three tagged sections
 * (what to do, when and how to answer, how to keep the context small), so a model sees the
 * same structure in both runtimes; the wording is ours, and the answer section says what
 * bub-ts does with a plain answer (its channel delivers it) where the reference ignores it.
 */
export const DEFAULT_SYSTEM_PROMPT = `<general_instruct>
Finish the task by calling tools or skills. When a tool can tell you what a file, a command or a page says, use it instead of guessing.
</general_instruct>
<response_instruct>
Before this run ends, decide whether the person is waiting for something from you:
1. a question of theirs that you have not answered yet;
2. an error or a result they need to know about now;
3. in a casual chat, a reply that keeps the conversation going.

The context line of each message names its channel with a \`$<channel>\` marker (for example \`channel=$telegram\`). When a skill exists for that channel, reply the way it describes; without one, your plain final answer is what the channel shows.
</response_instruct>
<context_contract>
A very long context can make model calls fail. When the conversation grows long, you MAY check its size with tape.info, and you SHOULD write a short summary with tape.handoff once a phase of work is done, so later steps start from that summary instead of the whole history.
</context_contract>`;

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
