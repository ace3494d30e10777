/**
 * How tape entries become model messages: which slice of the tape is read (the context's
 * anchor rule) and how the selected entries are turned into chat messages.
 */
import { LAST_ANCHOR, type ChatMessage, type TapeContext, type TapeEntry, type TapeQuery } from "../kernel/tape-contract.ts";
import type { TurnState } from "../kernel/types.ts";
import { pythonJson } from "./python-format.ts";
import { isRecord } from "../kernel/guards.ts";

type JsonRecord = Record<string, unknown>;

/**
 * A `message` entry's payload as a chat message: a copy of the payload. A payload without a
 * string `role` is given `role: "user"`, which is how the model layer reads such a message anyway.
 */
function chatMessage(payload: JsonRecord): ChatMessage {
  return { ...payload, role: typeof payload.role === "string" ? payload.role : "user" };
}

/**
 * The query that reads a context's slice of `tape`: after the last anchor (`LAST_ANCHOR`),
 * everything (`null`), or after the last anchor with the given name.
 */
export function contextQuery(tape: string, context: Pick<TapeContext, "anchor">): TapeQuery {
  if (context.anchor === LAST_ANCHOR) return { tape, lastAnchor: true };
  if (context.anchor === null || context.anchor === "") return { tape };
  return { tape, afterAnchor: context.anchor };
}

/** Entries that may reach a selector: everything except `meta.context === false`. */
export function contextEntries(entries: readonly TapeEntry[]): TapeEntry[] {
  return entries.filter((entry) => entry.meta.context !== false);
}

/** Without a selector, the context is the payloads of the `message` entries. */
export function plainMessages(entries: readonly TapeEntry[]): ChatMessage[] {
  return entries.filter((entry) => entry.kind === "message").map((entry) => chatMessage(entry.payload));
}

function toolCallsOf(value: unknown): JsonRecord[] {
  return Array.isArray(value) ? value.filter(isRecord).map((call) => ({ ...call })) : [];
}

function renderToolResult(result: unknown): string {
  return typeof result === "string" ? result : pythonJson(result);
}

function toolMessage(result: unknown, call: JsonRecord | undefined): ChatMessage {
  const message: ChatMessage = { role: "tool", content: renderToolResult(result) };
  if (!call) return message;
  if (typeof call.id === "string" && call.id !== "") message.tool_call_id = call.id;
  const fn = call.function;
  if (isRecord(fn) && typeof fn.name === "string" && fn.name !== "") message.name = fn.name;
  return message;
}

/**
 * The builtin selector, the reference's default context: an anchor becomes an assistant note
 * `[Anchor created: <name>]: <state JSON>`; a message is its payload; a tool call becomes an
 * assistant message with `tool_calls`; each tool result becomes a `tool` message paired by
 * position with the preceding call. System prompts, events and errors are left out.
 *
 * ```ts
 * const messages = selectMessages(entries, createDefaultTapeContext());
 * ```
 */
export function selectMessages(entries: Iterable<TapeEntry>, _context?: TapeContext): ChatMessage[] {
  const messages: ChatMessage[] = [];
  let pendingCalls: JsonRecord[] = [];
  for (const entry of entries) {
    const payload = entry.payload;
    switch (entry.kind) {
      case "anchor":
        messages.push({ role: "assistant", content: `[Anchor created: ${String(payload.name ?? "None")}]: ${pythonJson(payload.state)}` });
        break;
      case "message":
        messages.push(chatMessage(payload));
        break;
      case "tool_call":
        pendingCalls = toolCallsOf(payload.calls);
        // The text the model said beside its calls stays on the assistant message that makes them.
        if (pendingCalls.length > 0) messages.push({ role: "assistant", content: typeof payload.content === "string" ? payload.content : "", tool_calls: pendingCalls });
        break;
      case "tool_result":
        if (Array.isArray(payload.results)) payload.results.forEach((result, index) => messages.push(toolMessage(result, pendingCalls[index])));
        pendingCalls = [];
        break;
    }
  }
  return messages;
}

/**
 * The context Bub uses unless a plugin's `buildTapeContext` says otherwise: read after the
 * last anchor, select with {@link selectMessages}.
 */
export function createDefaultTapeContext(state: TurnState = {}): TapeContext {
  return { anchor: LAST_ANCHOR, select: selectMessages, state };
}

/** Runs the context's selector (or {@link plainMessages}) over entries already filtered by {@link contextEntries}. */
export async function buildMessages(entries: TapeEntry[], context: TapeContext): Promise<ChatMessage[]> {
  if (context.select) return await context.select(entries, context);
  return plainMessages(entries);
}
