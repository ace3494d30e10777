/**
 * A real Anthropic Messages API server on 127.0.0.1 for tests.
 *
 * Like `fake-openai.ts`: every test scripts the replies it needs, in order; each incoming
 * `POST /v1/messages` consumes the next one and is recorded (headers and JSON body).
 * Streaming requests get the Messages SSE events (`message_start`, `content_block_start`,
 * `content_block_delta` with `text_delta` / `thinking_delta` / `input_json_delta`,
 * `content_block_stop`, `message_delta`, `message_stop`); others get one `message` body.
 *
 * Requests are checked the way the real API checks them, so a client that builds an
 * invalid conversation fails here too: the `anthropic-version` header and `max_tokens` are
 * required, text blocks must be non-empty, every `tool_use` must be answered by a
 * `tool_result` in the next message (and every `tool_result` must answer one), and at most
 * four blocks may carry `cache_control`. Failures are HTTP 400 `invalid_request_error`.
 *
 * ```ts
 * const server = await startFakeAnthropic();
 * server.script(anthropicReply.toolUse([{ name: "fs_read", input: '{"path":"a"}' }]), anthropicReply.text("done"));
 * // createAnthropic({ baseURL: server.url, apiKey: "k" }) ...
 * server.requests[1].body.messages; // what was sent
 * await server.close();
 * ```
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { splitDeltas } from "./fake-openai.ts";
import { lowerHeaders, readBody, startScriptedServer, type Exchange, type Recorded, type ScriptedServer } from "./scripted-server.ts";

/** Token usage in Anthropic field names. */
export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

/** One `tool_use` block the fake model produces; `input` is raw JSON text sent in fragments. */
export interface FakeToolUse {
  id?: string;
  name: string;
  input: string;
}

/** A successful answer: streamed as SSE events, or one JSON message when `stream` is not set. */
export interface FakeAnthropicMessage {
  kind: "message";
  /** `thinking` block deltas: a string is split into word deltas. */
  thinking?: string | string[];
  /** `text` block deltas: a string is split into word deltas, an array is sent as given. */
  text?: string | string[];
  toolUses?: FakeToolUse[];
  /** Number of `input_json_delta` fragments per tool input (default 3). */
  inputFragments?: number;
  usage?: AnthropicUsage;
  /** Defaults to `tool_use` when there are tool uses, else `end_turn`. */
  stopReason?: string;
  delayMs?: number;
  /** Destroy the connection after this many SSE events (0: before any response byte). */
  dropAfterEvents?: number;
  /** Send an `error` event after the content blocks instead of `message_delta`/`message_stop`. */
  streamError?: { type: string; message: string };
}

/** An HTTP error in the Anthropic shape `{type: "error", error: {type, message}}`. */
export interface FakeAnthropicError {
  kind: "error";
  status: number;
  type: string;
  message: string;
  headers?: Record<string, string>;
}

/** Accept the request and never answer. */
export interface FakeAnthropicHang {
  kind: "hang";
}

export type FakeAnthropicReply = FakeAnthropicMessage | FakeAnthropicError | FakeAnthropicHang;
export type FakeAnthropicScript = FakeAnthropicReply | ((request: AnthropicRequest) => FakeAnthropicReply);

/** A content block of a request message, as far as tests look at it. */
export type AnthropicBlock = { type: string; text?: string; id?: string; name?: string; input?: unknown; tool_use_id?: string; content?: unknown; cache_control?: unknown; [key: string]: unknown };

/** The JSON body of a Messages request. */
export interface AnthropicMessagesBody {
  model: string;
  max_tokens: number;
  system?: string | AnthropicBlock[];
  messages: { role: "user" | "assistant"; content: string | AnthropicBlock[] }[];
  tools?: { name: string; description?: string; input_schema?: Record<string, unknown>; cache_control?: unknown }[];
  stream?: boolean;
  [key: string]: unknown;
}

/** One request the server received. */
export type AnthropicRequest = Recorded<AnthropicMessagesBody>;

/** A running fake Anthropic server; `url` is the `baseURL` of `@ai-sdk/anthropic` (it includes `/v1`). */
export type FakeAnthropic = ScriptedServer<AnthropicMessagesBody, FakeAnthropicScript>;

/** Builders for {@link FakeAnthropicReply} values. */
export const anthropicReply = {
  text(text: string | string[], options: Omit<FakeAnthropicMessage, "kind" | "text"> = {}): FakeAnthropicMessage {
    return { kind: "message", text, ...options };
  },
  toolUse(toolUses: FakeToolUse[], options: Omit<FakeAnthropicMessage, "kind" | "toolUses"> = {}): FakeAnthropicMessage {
    return { kind: "message", toolUses, ...options };
  },
  /** `rate_limit_error` for 429, `overloaded_error` for 529, `api_error` for other 5xx, else `invalid_request_error`. */
  error(status: number, message: string, options: { type?: string; retryAfter?: number; headers?: Record<string, string> } = {}): FakeAnthropicError {
    const type = options.type ?? (status === 429 ? "rate_limit_error" : status === 529 ? "overloaded_error" : status === 401 ? "authentication_error" : status >= 500 ? "api_error" : "invalid_request_error");
    const headers = { ...options.headers };
    if (options.retryAfter !== undefined) headers["retry-after"] = String(options.retryAfter);
    return { kind: "error", status, type, message, headers };
  },
  /** The 400 the API sends when the prompt does not fit the context window. */
  promptTooLong(tokens = 210_000, limit = 200_000): FakeAnthropicError {
    return { kind: "error", status: 400, type: "invalid_request_error", message: `prompt is too long: ${tokens} tokens > ${limit} maximum` };
  },
  hang(): FakeAnthropicHang {
    return { kind: "hang" };
  },
};

function fragments(text: string, parts: number): string[] {
  if (text.length === 0) return [];
  const size = Math.max(1, Math.ceil(text.length / Math.max(1, parts)));
  const out: string[] = [];
  for (let index = 0; index < text.length; index += size) out.push(text.slice(index, index + size));
  return out;
}

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), "request-id": `req_fake_${Date.now()}`, ...headers });
  response.end(text);
}

function errorBody(type: string, message: string): Record<string, unknown> {
  return { type: "error", error: { type, message } };
}

/** `GET /v1/models`: one page of `models` after `after_id`, at most `limit` (default 20). */
function listModels(request: IncomingMessage, response: ServerResponse, models: readonly string[], apiKey: string | undefined): void {
  if (apiKey !== undefined && request.headers["x-api-key"] !== apiKey) return sendJson(response, 401, errorBody("authentication_error", "invalid x-api-key"));
  const query = new URL(request.url ?? "/", "http://fake").searchParams;
  const limit = Number(query.get("limit") ?? 20);
  const after = query.get("after_id");
  const start = after === null ? 0 : models.indexOf(after) + 1;
  const page = models.slice(start, start + limit);
  const data = page.map((id) => ({ type: "model", id, display_name: id, created_at: "2025-01-01T00:00:00Z" }));
  sendJson(response, 200, { data, has_more: start + limit < models.length, first_id: page[0] ?? null, last_id: page.at(-1) ?? null });
}

function blocksOf(content: string | AnthropicBlock[] | undefined): AnthropicBlock[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? content : [];
}

/** What the real API would answer with 400 for this request, or null when it is valid. */
export function invalidRequest(body: AnthropicMessagesBody, headers: Record<string, string>): string | null {
  if (!headers["anthropic-version"]) return "anthropic-version: header is required";
  if (typeof body.model !== "string" || body.model === "") return "model: Field required";
  if (typeof body.max_tokens !== "number") return "max_tokens: Field required";
  if (!Array.isArray(body.messages) || body.messages.length === 0) return "messages: at least one message is required";
  let cacheMarks = (body.tools ?? []).filter((tool) => tool.cache_control).length;
  if (typeof body.system !== "string") cacheMarks += blocksOf(body.system).filter((block) => block.cache_control).length;
  for (const [index, message] of body.messages.entries()) {
    if (message.role !== "user" && message.role !== "assistant") return `messages.${index}.role: Input should be 'user' or 'assistant'`;
    const blocks = blocksOf(message.content);
    if (blocks.length === 0) return `messages.${index}: all messages must have non-empty content except for the optional final assistant message`;
    for (const block of blocks) {
      if (block.cache_control) cacheMarks++;
      if (block.type === "text" && (typeof block.text !== "string" || block.text === "")) return "messages: text content blocks must be non-empty";
    }
    const uses = blocks.filter((block) => block.type === "tool_use").map((block) => String(block.id));
    const next = body.messages[index + 1];
    const answered = new Set(next ? blocksOf(next.content).filter((block) => block.type === "tool_result").map((block) => String(block.tool_use_id)) : []);
    const missing = uses.filter((id) => !answered.has(id));
    if (missing.length > 0) return `messages.${index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    const previous = body.messages[index - 1];
    const asked = new Set(previous?.role === "assistant" ? blocksOf(previous.content).filter((block) => block.type === "tool_use").map((block) => String(block.id)) : []);
    const stray = blocks.filter((block) => block.type === "tool_result" && !asked.has(String(block.tool_use_id)));
    if (stray.length > 0) return `messages.${index}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${stray.map((block) => String(block.tool_use_id)).join(", ")}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
  }
  if (cacheMarks > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${cacheMarks}.`;
  return null;
}

function defaultUsage(body: AnthropicMessagesBody, output: number): AnthropicUsage {
  return { input_tokens: Math.ceil(JSON.stringify(body.messages ?? []).length / 4), output_tokens: output, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
}

/** The SSE events (name and data) for a streamed message. */
function streamEvents(scripted: FakeAnthropicMessage, body: AnthropicMessagesBody, id: string): [string, Record<string, unknown>][] {
  const thinking = splitDeltas(scripted.thinking ?? []);
  const text = splitDeltas(scripted.text ?? []);
  const uses = scripted.toolUses ?? [];
  const usage = scripted.usage ?? defaultUsage(body, thinking.length + text.length + uses.length);
  const events: [string, Record<string, unknown>][] = [];
  const start = { id, type: "message", role: "assistant", model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } };
  events.push(["message_start", { type: "message_start", message: start }]);
  events.push(["ping", { type: "ping" }]);
  let index = 0;
  const block = (contentBlock: Record<string, unknown>, deltas: Record<string, unknown>[]) => {
    events.push(["content_block_start", { type: "content_block_start", index, content_block: contentBlock }]);
    for (const delta of deltas) events.push(["content_block_delta", { type: "content_block_delta", index, delta }]);
    events.push(["content_block_stop", { type: "content_block_stop", index }]);
    index++;
  };
  if (thinking.length > 0) block({ type: "thinking", thinking: "" }, [...thinking.map((delta) => ({ type: "thinking_delta", thinking: delta })), { type: "signature_delta", signature: "fake-signature" }]);
  if (text.length > 0) block({ type: "text", text: "" }, text.map((delta) => ({ type: "text_delta", text: delta })));
  uses.forEach((use, position) => {
    const parts = fragments(use.input, scripted.inputFragments ?? 3);
    block({ type: "tool_use", id: use.id ?? `toolu_fake_${position}`, name: use.name, input: {} }, [{ type: "input_json_delta", partial_json: "" }, ...parts.map((part) => ({ type: "input_json_delta", partial_json: part }))]);
  });
  if (scripted.streamError) {
    events.push(["error", { type: "error", error: scripted.streamError }]);
    return events;
  }
  const stopReason = scripted.stopReason ?? (uses.length > 0 ? "tool_use" : "end_turn");
  events.push(["message_delta", { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } }]);
  events.push(["message_stop", { type: "message_stop" }]);
  return events;
}

/** The one-body answer of a non-streaming request. */
function messageBody(scripted: FakeAnthropicMessage, body: AnthropicMessagesBody, id: string): Record<string, unknown> {
  const content: Record<string, unknown>[] = [];
  const thinking = splitDeltas(scripted.thinking ?? []).join("");
  const text = splitDeltas(scripted.text ?? []).join("");
  if (thinking) content.push({ type: "thinking", thinking, signature: "fake-signature" });
  if (text) content.push({ type: "text", text });
  const uses = scripted.toolUses ?? [];
  uses.forEach((use, position) => content.push({ type: "tool_use", id: use.id ?? `toolu_fake_${position}`, name: use.name, input: JSON.parse(use.input || "{}") as unknown }));
  const usage = scripted.usage ?? defaultUsage(body, splitDeltas(scripted.text ?? []).length + uses.length);
  return { id, type: "message", role: "assistant", model: body.model, content, stop_reason: scripted.stopReason ?? (uses.length > 0 ? "tool_use" : "end_turn"), stop_sequence: null, usage };
}

/**
 * Starts a fake Anthropic server on 127.0.0.1 at a random port. `apiKey`, when given, is
 * required in `x-api-key` (401 `authentication_error` otherwise). A request that arrives
 * with an empty script gets HTTP 500 `no scripted reply`. With `models`, `GET /v1/models`
 * lists them in Anthropic's paged shape (`limit`, `after_id`; not recorded in `requests`).
 */
export async function startFakeAnthropic(options: { apiKey?: string; models?: readonly string[] } = {}): Promise<FakeAnthropic> {
  let sequence = 0;

  async function handle(request: IncomingMessage, response: ServerResponse, exchange: Exchange<AnthropicMessagesBody, FakeAnthropicScript>): Promise<void> {
    const raw = await readBody(request);
    const path = (request.url ?? "/").split("?")[0]!;
    if (request.method === "GET" && path === "/v1/models" && options.models) return listModels(request, response, options.models, options.apiKey);
    if (request.method !== "POST" || path !== "/v1/messages") return sendJson(response, 404, errorBody("not_found_error", `Not Found: ${request.method} ${path}`));
    const headers = lowerHeaders(request);
    if (options.apiKey !== undefined && headers["x-api-key"] !== options.apiKey) return sendJson(response, 401, errorBody("authentication_error", "invalid x-api-key"));
    let body: AnthropicMessagesBody;
    try {
      body = JSON.parse(raw) as AnthropicMessagesBody;
    } catch {
      return sendJson(response, 400, errorBody("invalid_request_error", "There was an error parsing the body of your request"));
    }
    const recorded: AnthropicRequest = { method: request.method, path, headers, body };
    exchange.record(recorded);
    const invalid = invalidRequest(body, headers);
    if (invalid) return sendJson(response, 400, errorBody("invalid_request_error", invalid));
    const next = exchange.next();
    if (next === undefined) return sendJson(response, 500, errorBody("api_error", "no scripted reply"));
    const scripted = typeof next === "function" ? next(recorded) : next;
    if (scripted.kind === "hang") return;
    if (scripted.kind === "error") return sendJson(response, scripted.status, errorBody(scripted.type, scripted.message), scripted.headers);
    if (scripted.delayMs) await new Promise((resolve) => setTimeout(resolve, scripted.delayMs));
    if (scripted.dropAfterEvents === 0) return void request.socket.destroy();
    const id = `msg_fake_${++sequence}`;
    if (body.stream !== true) return sendJson(response, 200, messageBody(scripted, body, id));
    response.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive", "request-id": `req_fake_${sequence}` });
    let sent = 0;
    for (const [event, data] of streamEvents(scripted, body, id)) {
      if (scripted.dropAfterEvents !== undefined && sent >= scripted.dropAfterEvents) {
        await new Promise<void>((resolve) => response.write("", () => resolve()));
        request.socket.destroy();
        return;
      }
      response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      sent++;
    }
    response.end();
  }

  return startScriptedServer(handle, (response, error) => sendJson(response, 500, errorBody("api_error", String(error))));
}
