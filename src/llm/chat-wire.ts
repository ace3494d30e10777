/**
 * The last touch on a chat-completions request body the AI SDK built, so the messages a
 * model sees have the same shape as in the reference runtime (which sends the tape's
 * messages as they are):
 *
 * - an assistant message always has a string `content`: `""` when it only calls tools (the
 *   SDK converters send `null`);
 * - a tool result message names its tool (`name`, taken from the call it answers), which
 *   the OpenAI and OpenAI-compatible converters leave out.
 *
 * OpenAI-compatible providers apply it through their `transformRequestBody` option, on the
 * body before it is serialised. The `openai` (chat) and `openrouter` providers have no such
 * option and send the SDK's own shape: no request body is parsed and rewritten.
 */
import { isRecord } from "../kernel/guards.ts";

/**
 * Aligns `body.messages` in place (see the module comment) and returns `body`. A body
 * without a `messages` array is returned unchanged.
 */
export function alignChatRequestBody<T extends Record<string, unknown>>(body: T): T {
  const messages = body.messages;
  if (!Array.isArray(messages)) return body;
  /** Tool call id → function name, over the assistant messages seen so far. */
  const callNames = new Map<string, string>();
  for (const message of messages) {
    if (!isRecord(message)) continue;
    if (message.role === "assistant") {
      if (message.content === null || message.content === undefined) message.content = "";
      if (!Array.isArray(message.tool_calls)) continue;
      for (const call of message.tool_calls) {
        if (!isRecord(call) || typeof call.id !== "string" || !isRecord(call.function)) continue;
        const name = call.function.name;
        if (typeof name === "string" && name !== "") callNames.set(call.id, name);
      }
    } else if (message.role === "tool" && (typeof message.name !== "string" || message.name === "")) {
      const name = typeof message.tool_call_id === "string" ? callNames.get(message.tool_call_id) : undefined;
      if (name !== undefined) message.name = name;
    }
  }
  return body;
}
