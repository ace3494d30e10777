/** What the agent reads off a prompt (its text, whether it is a comma command), and the system prompt it sends: its text and hash. */
import { createHash } from "node:crypto";
import type { Prompt } from "../kernel/envelope.ts";

/** The hash a `run` event carries to name the system prompt it used. */
export function systemHash(system: string): string {
  // Most steps send the same system prompt as the step before: compare before hashing again.
  if (system !== lastSystem) {
    lastSystem = system;
    lastHash = createHash("md5").update(system).digest("hex");
  }
  return lastHash;
}
let lastSystem: string | null = null;
let lastHash = "";

/**
 * The system prompt made of `blocks`: the non-empty ones, a blank line between them. Most
 * steps are made of the very strings of the step before (the hook's text, the cached tools and
 * skills blocks), so that step's text is answered again rather than joined anew, and
 * {@link systemHash} knows it at once.
 */
export function joinSystemBlocks(blocks: readonly string[]): string {
  if (lastBlocks.length !== blocks.length || lastBlocks.some((block, index) => block !== blocks[index])) {
    lastBlocks = blocks;
    lastJoined = blocks.filter((block) => block.length > 0).join("\n\n");
  }
  return lastJoined;
}
let lastBlocks: readonly string[] = [];
let lastJoined = "";

/** The text parts of a prompt, joined by newlines. */
export function promptText(prompt: Prompt): string {
  if (typeof prompt === "string") return prompt;
  return prompt
    .filter((part) => typeof part === "object" && part !== null && part.type === "text")
    .map((part) => part.text)
    .join("\n");
}

/** True for a comma command (`,help`), which runs a tool directly instead of the model. */
export function isCommand(prompt: Prompt): prompt is string {
  return typeof prompt === "string" && prompt.trim().startsWith(",");
}
