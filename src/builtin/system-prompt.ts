import { join } from "node:path";
import { errorCode, errorMessage } from "../config/thrown.ts";
import { readBoundedTextFile, readBoundedTextFileSync } from "../config/bounded-file.ts";
import { createLogger } from "../kernel/log.ts";

const log = createLogger("bub:builtin");

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

/** Default most bytes of AGENTS.md (`BUB_AGENTS_MAX_BYTES`): a larger one is left out of the system prompt. */
export const DEFAULT_AGENTS_MAX_BYTES = 256 * 1024;

/** A configured `agents_max_bytes`, or the default when it is not a positive whole number. */
export function agentsMaxBytes(value: unknown): number {
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : DEFAULT_AGENTS_MAX_BYTES;
}

function agentsPath(workspace: string): string {
  return join(workspace, "AGENTS.md");
}

function readOptions(maxBytes: number) {
  return { maxBytes, what: "AGENTS.md", tooLargeFix: "shorten it or raise BUB_AGENTS_MAX_BYTES (agents_max_bytes in config.yml); it is left out of the system prompt until then" };
}

/** What one read of AGENTS.md found: its trimmed text ("" when missing or refused) and why it was refused. */
interface AgentsRead {
  readonly text: string;
  readonly problem: string | null;
}

/** A failed read as an {@link AgentsRead}: a missing file is no problem, anything else is one. */
function failedRead(error: unknown): AgentsRead {
  const code = errorCode(error);
  return { text: "", problem: code === "ENOENT" || code === "ENOTDIR" ? null : errorMessage(error) };
}

const MAX_WORKSPACES = 64;

/**
 * The workspaces' AGENTS.md texts as last read. The `systemPrompt` hook is synchronous, so
 * the builtin's `loadState` calls {@link refresh} first: it reads the file off the event loop
 * when the text it holds is older than `maxAgeMs` (1 s), so an edit shows from the next turn
 * a second or more later. {@link text} reads synchronously only for a workspace never refreshed.
 *
 * An AGENTS.md that is not a regular file (a FIFO, a link to `/dev/zero`) or is larger than
 * `maxBytes` is left out: the turn goes on without it, and one warning says why, once for
 * each new problem rather than at every turn.
 */
export class AgentsFiles {
  readonly #maxAgeMs: number;
  readonly #maxBytes: () => number;
  readonly #known = new Map<string, { text: string; readAt: number; problem: string | null }>();
  readonly #reading = new Map<string, Promise<void>>();

  /** `maxBytes`: the bound, asked at every read (a setting can change); default {@link DEFAULT_AGENTS_MAX_BYTES}. */
  constructor(options: { maxAgeMs?: number; maxBytes?: () => number } = {}) {
    this.#maxAgeMs = options.maxAgeMs ?? 1000;
    this.#maxBytes = options.maxBytes ?? (() => DEFAULT_AGENTS_MAX_BYTES);
  }

  /** Reads the workspace's AGENTS.md again unless the text held is recent enough. */
  refresh(workspace: string): Promise<void> {
    const known = this.#known.get(workspace);
    if (known && performance.now() - known.readAt < this.#maxAgeMs) return Promise.resolve();
    let reading = this.#reading.get(workspace);
    if (!reading) {
      const readAt = performance.now();
      reading = readBoundedTextFile(agentsPath(workspace), readOptions(this.#maxBytes()))
        .then((text) => ({ text: text.trim(), problem: null }), failedRead)
        .then((read) => this.#remember(workspace, read, readAt))
        .finally(() => this.#reading.delete(workspace));
      this.#reading.set(workspace, reading);
    }
    return reading;
  }

  /** The text held for the workspace (read now, synchronously, when it was never read). */
  text(workspace: string): string {
    const known = this.#known.get(workspace);
    if (known) return known.text;
    let read: AgentsRead;
    try {
      read = { text: readBoundedTextFileSync(agentsPath(workspace), readOptions(this.#maxBytes())).trim(), problem: null };
    } catch (error) {
      read = failedRead(error);
    }
    this.#remember(workspace, read, performance.now());
    return read.text;
  }

  #remember(workspace: string, read: AgentsRead, readAt: number): void {
    const before = this.#known.get(workspace);
    if (read.problem !== null && read.problem !== before?.problem) log.warn(`agents_md.skipped ${read.problem}`);
    if (!before && this.#known.size >= MAX_WORKSPACES) this.#known.clear();
    this.#known.set(workspace, { ...read, readAt });
  }
}

/** The builtin system prompt fragment: the default prompt plus the workspace's AGENTS.md as `files` holds it. */
export function builtinSystemPrompt(workspace: string, files: AgentsFiles): string {
  const agents = files.text(workspace);
  return agents ? `${DEFAULT_SYSTEM_PROMPT}\n\n${agents}` : DEFAULT_SYSTEM_PROMPT;
}
