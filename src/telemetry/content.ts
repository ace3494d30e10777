/**
 * Chat messages in the shape the GenAI semantic conventions give `gen_ai.input.messages`
 * and `gen_ai.output.messages`: `{ role, parts: [{ type: "text", content }, { type:
 * "tool_call", id, name, arguments }, { type: "tool_call_response", id, response }] }`.
 * Only used when content capture is on; the caller redacts the JSON text.
 */
import type { ChatMessage } from "../kernel/tape-contract.ts";

type Part = Record<string, unknown>;

function parsed(text: unknown): unknown {
  if (typeof text !== "string") return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function toolCallParts(calls: unknown): Part[] {
  if (!Array.isArray(calls)) return [];
  return calls.map((call: { id?: unknown; function?: { name?: unknown; arguments?: unknown } }) => ({
    type: "tool_call",
    id: call.id ?? null,
    name: call.function?.name ?? null,
    arguments: parsed(call.function?.arguments),
  }));
}

function contentParts(content: unknown): Part[] {
  if (content === undefined || content === null || content === "") return [];
  if (typeof content === "string") return [{ type: "text", content }];
  if (Array.isArray(content)) {
    return content.map((part: { type?: unknown; text?: unknown }) => (part?.type === "text" && typeof part.text === "string" ? { type: "text", content: part.text } : { type: String(part?.type ?? "unknown") }));
  }
  return [{ type: "text", content: JSON.stringify(content) }];
}

/** The messages a model call sends (system prompt included). */
export function inputMessages(messages: readonly ChatMessage[]): Part[] {
  return messages.map((message) => {
    if (message.role === "tool") return { role: "tool", parts: [{ type: "tool_call_response", id: message.tool_call_id ?? null, response: message.content ?? null }] };
    return { role: message.role, parts: [...contentParts(message.content), ...toolCallParts(message.tool_calls)] };
  });
}

/** What the model answered: its text and tool calls. */
export function outputMessages(text: string | null, toolCalls: readonly Record<string, unknown>[], finishReason: string | null): Part[] {
  return [{ role: "assistant", parts: [...contentParts(text), ...toolCallParts(toolCalls)], finish_reason: finishReason }];
}
