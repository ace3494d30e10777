/** Steering messages that arrived for a running turn, turned into prompts for its next step. */
import { isEmptyPrompt, type Prompt } from "../kernel/envelope.ts";
import type { BubFramework } from "../kernel/framework.ts";
import type { TurnState } from "../kernel/types.ts";
import type { TurnContext } from "../kernel/turn-context.ts";

/** Drains the turn's steering messages and builds each one's prompt (`buildPrompt`; an empty answer: its content). */
export async function drainSteering(framework: BubFramework, state: TurnState, turn: TurnContext): Promise<Prompt[]> {
  if (!turn.steering) return [];
  const prompts: Prompt[] = [];
  for (const message of turn.steering.drainMessages(turn)) {
    const built = await framework.runtime.call("buildPrompt", { message, sessionId: turn.sessionId, state, context: turn, signal: turn.signal });
    prompts.push(isEmptyPrompt(built) ? message.content : built);
  }
  return prompts;
}
