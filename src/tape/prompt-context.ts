/**
 * The context line a channel puts before each prompt (`sender_id=…|channel=$cli|chat_id=…`,
 * then `---Date: …---`, see `buildChannelPrompt` in src/builtin/agent-plugin.ts), taken
 * apart again: readers that want what the person typed (an export, a replay) drop it.
 */

const PROMPT_CONTEXT = /^([^\n]*)\n---Date: ([^\n]*)---\n/;

/** A prompt split into its context line, date and text; `context` and `date` are null when it has no such header. */
export interface SplitPrompt {
  readonly context: string | null;
  readonly date: string | null;
  readonly text: string;
}

/** Splits `prompt` into its context header and the text after it. */
export function splitPromptContext(prompt: string): SplitPrompt {
  const match = PROMPT_CONTEXT.exec(prompt);
  if (!match) return { context: null, date: null, text: prompt };
  return { context: match[1] ?? "", date: match[2] ?? null, text: prompt.slice(match[0].length) };
}

/** The `key=value` fields of a context line (`channel=$cli` gives `channel: "cli"`). */
export function contextFields(context: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const part of context.split("|")) {
    const at = part.indexOf("=");
    if (at <= 0) continue;
    const key = part.slice(0, at);
    const value = part.slice(at + 1);
    fields[key] = key === "channel" ? value.replace(/^\$/, "") : value;
  }
  return fields;
}
