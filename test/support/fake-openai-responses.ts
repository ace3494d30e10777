/**
 * The OpenAI Responses API (`POST /v1/responses`) for the fake OpenAI server in
 * `fake-openai.ts`: the same scripted replies (`reply.text`, `reply.toolCalls`, errors ...)
 * rendered as Responses output items — streamed as the typed SSE events the real API sends
 * (`response.created`, `response.output_item.added`, `response.output_text.delta`,
 * `response.function_call_arguments.delta`, `response.output_item.done`,
 * `response.completed` ...) or returned as one `response` object. A reply's `reasoning` is
 * rendered as a reasoning item's summary only when the request asks for one
 * (`reasoning.summary`), as the real API does; `finishReason: "length"` ends it as
 * `response.incomplete`.
 *
 * Requests are checked as the real API checks them: every `function_call_output` needs its
 * `function_call` (earlier in `input`, or stored by an earlier response and named by an
 * `item_reference`), and every `function_call` in `input` needs its output.
 */
import { splitDeltas, type ChatCompletionBody, type FakeStreamReply, type FakeUsage } from "./fake-openai.ts";

/** One item of a Responses request's `input`, as far as the fake looks at it. */
export type ResponsesInputItem = { type?: string; role?: string; id?: string; call_id?: string; name?: string; arguments?: string; output?: unknown; content?: unknown; [key: string]: unknown };

/** The JSON body of a Responses request. */
export interface ResponsesBody {
  model: string;
  input: string | ResponsesInputItem[];
  instructions?: string;
  tools?: { type: string; name?: string; description?: string; parameters?: Record<string, unknown> }[];
  stream?: boolean;
  store?: boolean;
  max_output_tokens?: number;
  [key: string]: unknown;
}

/** Output items of earlier responses, by item id (what `store: true` keeps on the server). */
export type StoredItems = Map<string, Record<string, unknown>>;

/** The 400 message the real API would send for this request, or null when it is valid. */
export function invalidResponsesRequest(body: ResponsesBody, stored: StoredItems): string | null {
  if (typeof body.model !== "string" || body.model === "") return "Missing required parameter: 'model'.";
  if (typeof body.input === "string") return null;
  if (!Array.isArray(body.input)) return "Invalid type for 'input': expected a string or an array of input items.";
  const calls = new Set<string>();
  const answered = new Set<string>();
  for (const raw of body.input) {
    const item = raw.type === "item_reference" ? stored.get(String(raw.id)) : raw;
    if (!item) return `Item with id '${String(raw.id)}' not found.`;
    if (item.type === "function_call") calls.add(String(item.call_id));
    if (item.type === "function_call_output") {
      if (!calls.has(String(item.call_id))) return `No tool call found for function call output with call_id ${String(item.call_id)}.`;
      answered.add(String(item.call_id));
    }
  }
  for (const call of calls) if (!answered.has(call)) return `No tool output found for function call ${call}.`;
  return null;
}

function usageOf(scripted: FakeStreamReply, body: ResponsesBody, produced: number): Record<string, unknown> {
  const usage: FakeUsage = scripted.usage ?? { prompt_tokens: Math.ceil(JSON.stringify(body.input ?? "").length / 4), completion_tokens: produced };
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens,
  };
}

function fragmentsOf(text: string, parts: number): string[] {
  if (text.length === 0) return [];
  const size = Math.max(1, Math.ceil(text.length / Math.max(1, parts)));
  const out: string[] = [];
  for (let index = 0; index < text.length; index += size) out.push(text.slice(index, index + size));
  return out;
}

/** The response object, its output items, and the SSE events that stream it. */
function render(scripted: FakeStreamReply, body: ResponsesBody, id: string): { response: Record<string, unknown>; events: Record<string, unknown>[] } {
  const created = Math.floor(Date.now() / 1000);
  const events: Record<string, unknown>[] = [];
  const output: Record<string, unknown>[] = [];
  const shell = { id, object: "response", created_at: created, model: body.model, output: [], usage: null, incomplete_details: null, error: null, status: "in_progress" };
  events.push({ type: "response.created", response: shell }, { type: "response.in_progress", response: shell });
  const text = splitDeltas(scripted.text ?? []);
  let produced = 0;
  const reasoning = splitDeltas(scripted.reasoning ?? []);
  if (reasoning.length > 0 && typeof body.reasoning === "object" && body.reasoning !== null && (body.reasoning as { summary?: unknown }).summary) {
    const index = output.length;
    const itemId = `rs_${id}_${index}`;
    const full = reasoning.join("");
    const at = { item_id: itemId, output_index: index, summary_index: 0 };
    events.push({ type: "response.output_item.added", output_index: index, item: { id: itemId, type: "reasoning", summary: [] } });
    events.push({ type: "response.reasoning_summary_part.added", ...at, part: { type: "summary_text", text: "" } });
    for (const delta of reasoning) events.push({ type: "response.reasoning_summary_text.delta", ...at, delta });
    events.push({ type: "response.reasoning_summary_text.done", ...at, text: full });
    events.push({ type: "response.reasoning_summary_part.done", ...at, part: { type: "summary_text", text: full } });
    const encrypted = Array.isArray(body.include) && body.include.includes("reasoning.encrypted_content") ? { encrypted_content: `enc-${id}` } : {};
    const item = { id: itemId, type: "reasoning", summary: [{ type: "summary_text", text: full }], ...encrypted };
    events.push({ type: "response.output_item.done", output_index: index, item });
    output.push(item);
    produced += reasoning.length;
  }
  if (text.length > 0) {
    const index = output.length;
    const itemId = `msg_${id}_${index}`;
    const full = text.join("");
    events.push({ type: "response.output_item.added", output_index: index, item: { id: itemId, type: "message", status: "in_progress", role: "assistant", content: [] } });
    events.push({ type: "response.content_part.added", item_id: itemId, output_index: index, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
    for (const delta of text) events.push({ type: "response.output_text.delta", item_id: itemId, output_index: index, content_index: 0, delta, logprobs: [] });
    events.push({ type: "response.output_text.done", item_id: itemId, output_index: index, content_index: 0, text: full, logprobs: [] });
    events.push({ type: "response.content_part.done", item_id: itemId, output_index: index, content_index: 0, part: { type: "output_text", text: full, annotations: [] } });
    const item = { id: itemId, type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: full, annotations: [] }] };
    events.push({ type: "response.output_item.done", output_index: index, item });
    output.push(item);
    produced += text.length;
  }
  (scripted.toolCalls ?? []).forEach((call, position) => {
    const index = output.length;
    const itemId = `fc_${id}_${index}`;
    const callId = call.id ?? `call_${position}`;
    events.push({ type: "response.output_item.added", output_index: index, item: { id: itemId, type: "function_call", status: "in_progress", arguments: "", call_id: callId, name: call.name } });
    const parts = fragmentsOf(call.arguments, scripted.argumentFragments ?? 3);
    for (const delta of parts) events.push({ type: "response.function_call_arguments.delta", item_id: itemId, output_index: index, delta });
    events.push({ type: "response.function_call_arguments.done", item_id: itemId, output_index: index, arguments: call.arguments });
    const item = { id: itemId, type: "function_call", status: "completed", arguments: call.arguments, call_id: callId, name: call.name };
    events.push({ type: "response.output_item.done", output_index: index, item });
    output.push(item);
    produced += parts.length;
  });
  const incomplete = scripted.finishReason === "length" ? { reason: "max_output_tokens" } : null;
  const response = { ...shell, status: incomplete ? "incomplete" : "completed", output, usage: usageOf(scripted, body, produced), incomplete_details: incomplete };
  events.push({ type: incomplete ? "response.incomplete" : "response.completed", response });
  events.forEach((event, index) => (event.sequence_number = index));
  return { response, events };
}

/** The SSE events of a streamed response; its output items are kept in `stored`. */
export function responsesEvents(scripted: FakeStreamReply, body: ChatCompletionBody | ResponsesBody, id: string, stored: StoredItems): Record<string, unknown>[] {
  const { response, events } = render(scripted, body as ResponsesBody, id);
  if ((body as ResponsesBody).store !== false) for (const item of response.output as Record<string, unknown>[]) stored.set(String(item.id), item);
  return events;
}

/** The one-body answer of a non-streaming request; its output items are kept in `stored`. */
export function responsesBody(scripted: FakeStreamReply, body: ChatCompletionBody | ResponsesBody, id: string, stored: StoredItems): Record<string, unknown> {
  const { response } = render(scripted, body as ResponsesBody, id);
  if ((body as ResponsesBody).store !== false) for (const item of response.output as Record<string, unknown>[]) stored.set(String(item.id), item);
  return response;
}
