import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
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
function readAgentsFile(workspace: string): string {
  try {
    return readFileSync(agentsPath(workspace), "utf8").trim();
  } catch {
    return "";
  }
}

function agentsPath(workspace: string): string {
  return join(workspace, "AGENTS.md");
}

const MAX_WORKSPACES = 64;

/**
 * The workspaces' AGENTS.md texts as last read. The `systemPrompt` hook is synchronous, so
 * the builtin's `loadState` calls {@link refresh} first: it reads the file off the event loop
 * when the text it holds is older than `maxAgeMs` (1 s), so an edit shows from the next turn
 * a second or more later. {@link text} reads synchronously only for a workspace never refreshed.
 */
export class AgentsFiles {
  readonly #maxAgeMs: number;
  readonly #known = new Map<string, { text: string; readAt: number }>();
  readonly #reading = new Map<string, Promise<void>>();

  constructor(options: { maxAgeMs?: number } = {}) {
    this.#maxAgeMs = options.maxAgeMs ?? 1000;
  }

  /** Reads the workspace's AGENTS.md again unless the text held is recent enough. */
  refresh(workspace: string): Promise<void> {
    const known = this.#known.get(workspace);
    if (known && performance.now() - known.readAt < this.#maxAgeMs) return Promise.resolve();
    let reading = this.#reading.get(workspace);
    if (!reading) {
      const readAt = performance.now();
      reading = readFile(agentsPath(workspace), "utf8")
        .then((text) => text.trim(), () => "")
        .then((text) => this.#remember(workspace, text, readAt))
        .finally(() => this.#reading.delete(workspace));
      this.#reading.set(workspace, reading);
    }
    return reading;
  }

  /** The text held for the workspace (read now, synchronously, when it was never read). */
  text(workspace: string): string {
    const known = this.#known.get(workspace);
    if (known) return known.text;
    const text = readAgentsFile(workspace);
    this.#remember(workspace, text, performance.now());
    return text;
  }

  #remember(workspace: string, text: string, readAt: number): void {
    if (!this.#known.has(workspace) && this.#known.size >= MAX_WORKSPACES) this.#known.clear();
    this.#known.set(workspace, { text, readAt });
  }
}

/** The builtin system prompt fragment: the default prompt plus the workspace's AGENTS.md as `files` holds it. */
export function builtinSystemPrompt(workspace: string, files: AgentsFiles): string {
  const agents = files.text(workspace);
  return agents ? `${DEFAULT_SYSTEM_PROMPT}\n\n${agents}` : DEFAULT_SYSTEM_PROMPT;
}
