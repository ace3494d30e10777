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
 * OpenAI-compatible providers apply it through their `transformRequestBody` option; the
 * `openai` (chat) and `openrouter` providers, which have no such option, through
 * {@link alignedChatFetch}, which rewrites the JSON body of each request they send.
 */
import type { FetchFunction } from "./transport.ts";
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

/**
 * `fetch` that aligns the JSON body of every request with a `messages` array before
 * sending it through `send`; any other request (and a body that is not JSON text) passes
 * unchanged.
 */
export function alignedChatFetch(send: FetchFunction): FetchFunction {
  return (input, init) => {
    const body = init?.body;
    if (typeof body !== "string" || !body.includes('"messages"')) return send(input, init);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return send(input, init);
    }
    if (!isRecord(parsed) || !Array.isArray(parsed.messages)) return send(input, init);
    return send(input, { ...init, body: JSON.stringify(alignChatRequestBody(parsed)) });
  };
}
