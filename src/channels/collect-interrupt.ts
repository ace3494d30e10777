/**
 * The two admission modes that reshape a busy session's turns: `collect` merges the messages
 * that arrived during a turn into one follow-up turn, `interrupt` cancels the running turn
 * for the newer message (the abort reason {@link TurnSuperseded} names it).
 */
import type { Envelope } from "../kernel/envelope.ts";
import { ChannelMessage } from "./message.ts";

/** How much of the newer message's text an interrupted turn's reason quotes. */
const PREVIEW_CHARS = 80;

/**
 * One message standing for several collected ones, in arrival order: the last message with
 * every content joined by newlines, all media kept, and `collected_messages` (how many) in
 * its context. As with a debounce batch, the turn carries the last message's lifespan.
 */
export function mergeCollected(messages: readonly Envelope[]): Envelope {
  const last = messages.at(-1);
  if (!last) throw new Error("mergeCollected needs at least one message");
  if (messages.length === 1) return last;
  const content = messages.map((message) => message.content).join("\n");
  const media = messages.flatMap((message) => message.media);
  const context = { ...last.context, collected_messages: messages.length };
  if (last instanceof ChannelMessage) return last.with({ content, media, context });
  return { ...last, content, media, context };
}

/**
 * The abort reason of a turn a newer message of its session cancelled (admission
 * `interrupt`). Named `AbortError`, as cancellations are; its text names the newer message,
 * and the agent writes it as the `reason` of the turn's `interrupted` tape event.
 */
export class TurnSuperseded extends Error {
  constructor(newer: Envelope) {
    super(`interrupted by a newer message in ${newer.sessionId || "its session"}: ${preview(newer.content)}`);
    this.name = "AbortError";
  }
}

function preview(content: string): string {
  const line = content.replace(/\s+/g, " ").trim();
  return line.length > PREVIEW_CHARS ? `${line.slice(0, PREVIEW_CHARS)}…` : line;
}
