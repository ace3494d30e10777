/**
 * A real OpenAI-compatible chat-completions server on 127.0.0.1 for tests and benchmarks.
 *
 * Every test scripts the replies it needs, in order; each incoming
 * `POST /v1/chat/completions` consumes the next one and is recorded (headers and JSON body)
 * so the test can assert exactly what the client sent. `POST /v1/responses` (the OpenAI
 * Responses API, see `fake-openai-responses.ts`) takes its replies from the same queue.
 *
 * ```ts
 * const server = await startFakeOpenAI();
 * server.script(reply.text("Hello there", { usage: { prompt_tokens: 5, completion_tokens: 2 } }));
 * // ... point a client at server.url (ends in /v1) ...
 * server.requests[0].body.messages; // what was sent
 * await server.close();
 * ```
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { lowerHeaders, readBody, startScriptedServer, type Exchange, type Recorded, type ScriptedServer } from "./scripted-server.ts";
import { invalidResponsesRequest, responsesBody, responsesEvents, type ResponsesBody, type StoredItems } from "./fake-openai-responses.ts";

/** Token usage in OpenAI field names; `total_tokens` defaults to the sum. */
export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number };
}

/** One tool call the fake model makes; `arguments` is sent verbatim, in fragments. */
export interface FakeToolCall {
  id?: string;
  name: string;
  /** Raw JSON text (it may be deliberately malformed). */
  arguments: string;
}

/** A successful answer, streamed as SSE chunks (or one JSON body when `stream` is false). */
export interface FakeStreamReply {
  kind: "stream";
  /** Reasoning deltas (`delta.reasoning_content`): a string is split into word deltas. */
  reasoning?: string | string[];
  /** Content deltas: a string is split into word deltas, an array is sent as given. */
  text?: string | string[];
  toolCalls?: FakeToolCall[];
  /** Number of fragments each tool call's arguments are split into (default 3). */
  argumentFragments?: number;
  /** Sent in a final chunk when the client asked for `stream_options.include_usage`. `null`: never. */
  usage?: FakeUsage | null;
  /** Defaults to `tool_calls` when there are tool calls, else `stop`. */
  finishReason?: string;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Answer only once this settles (a test's gate: a slow first call that ends when the test says). */
  waitFor?: Promise<unknown>;
  /** Destroy the connection after this many SSE chunks (0: before any response byte). */
  dropAfterChunks?: number;
  /** After this many SSE chunks send one event whose data is not JSON, then end the stream. */
  malformedAfterChunks?: number;
}

/** An HTTP error answer in the OpenAI error shape. */
export interface FakeErrorReply {
  kind: "error";
  status: number;
  message: string;
  type?: string;
  code?: string | number | null;
  headers?: Record<string, string>;
}

/** Accept the request and never answer (until the client aborts or the server closes). */
export interface FakeHangReply {
  kind: "hang";
}

/**
 * A stream that is never idle: one content delta (`text`) every `everyMs`, for ever (until
 * the client aborts or the server closes), or after `chunks` deltas a normal finish.
 */
export interface FakeTrickleReply {
  kind: "trickle";
  everyMs: number;
  text: string;
  chunks?: number;
}

/** What the fake model does for one request. */
export type FakeReply = FakeStreamReply | FakeErrorReply | FakeHangReply | FakeTrickleReply;

/** A scripted reply, or a function choosing one from the request. */
export type FakeReplyScript = FakeReply | ((request: RecordedRequest) => FakeReply);

/** The JSON body of a chat-completions request, as far as tests look at it. */
export interface ChatCompletionBody {
  model: string;
  messages: Record<string, unknown>[];
  tools?: { type: string; function: { name: string; description?: string; parameters?: Record<string, unknown> } }[];
  max_tokens?: number;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [key: string]: unknown;
}

/** One request the server received. */
export type RecordedRequest = Recorded<ChatCompletionBody>;

/** A running fake server. */
export type FakeOpenAI = ScriptedServer<ChatCompletionBody, FakeReplyScript>;

/** Builders for {@link FakeReply} values. */
export const reply = {
  /** A text answer streamed as several deltas. */
  text(text: string | string[], options: Omit<FakeStreamReply, "kind" | "text"> = {}): FakeStreamReply {
    return { kind: "stream", text, ...options };
  },
  /** Tool calls (optionally with text/reasoning first). */
  toolCalls(calls: FakeToolCall[], options: Omit<FakeStreamReply, "kind" | "toolCalls"> = {}): FakeStreamReply {
    return { kind: "stream", toolCalls: calls, ...options };
  },
  /** An HTTP error with an OpenAI error body; `retryAfter` sets the `retry-after` header (seconds). */
  error(status: number, message: string, options: { retryAfter?: number | string; type?: string; code?: string | number | null; headers?: Record<string, string> } = {}): FakeErrorReply {
    const headers = { ...options.headers };
    if (options.retryAfter !== undefined) headers["retry-after"] = String(options.retryAfter);
    return { kind: "error", status, message, type: options.type, code: options.code, headers };
  },
  /** The 400 an OpenAI-compatible server sends when the prompt is too long. */
  contextLength(limit = 8192, requested = limit + 1000): FakeErrorReply {
    return {
      kind: "error",
      status: 400,
      message: `This model's maximum context length is ${limit} tokens. However, you requested ${requested} tokens. Please reduce the length of the messages.`,
      type: "invalid_request_error",
      code: "context_length_exceeded",
    };
  },
  /** Never answers. */
  hang(): FakeHangReply {
    return { kind: "hang" };
  },
  /** Streams `text` every `everyMs` without end (or `chunks` times, then finishes). */
  trickle(everyMs: number, text = "tick ", options: { chunks?: number } = {}): FakeTrickleReply {
    return { kind: "trickle", everyMs, text, ...options };
  },
  /** Sends `text` deltas, then after `afterChunks` chunks an event that is not JSON (a broken stream). */
  malformed(afterChunks = 1, text: string | string[] = ""): FakeStreamReply {
    return { kind: "stream", text, malformedAfterChunks: afterChunks };
  },
  /** Sends `text` deltas, then drops the connection after `afterChunks` chunks. */
  drop(afterChunks = 0, text: string | string[] = ""): FakeStreamReply {
    return { kind: "stream", text, dropAfterChunks: afterChunks };
  },
};

/** Splits text into word-sized deltas, keeping whitespace, so it arrives in several chunks. */
export function splitDeltas(text: string | string[]): string[] {
  if (Array.isArray(text)) return text;
  if (text === "") return [];
  return text.match(/\S+\s*|\s+/g) ?? [text];
}

function splitFragments(text: string, parts: number): string[] {
  if (text.length === 0) return [""];
  const size = Math.max(1, Math.ceil(text.length / Math.max(1, parts)));
  const fragments: string[] = [];
  for (let index = 0; index < text.length; index += size) fragments.push(text.slice(index, index + size));
  return fragments;
}

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  response.end(text);
}

function defaultUsage(body: ChatCompletionBody, completionTokens: number): FakeUsage {
  const promptChars = JSON.stringify(body.messages ?? []).length;
  const prompt = Math.ceil(promptChars / 4);
  return { prompt_tokens: prompt, completion_tokens: completionTokens, total_tokens: prompt + completionTokens };
}

function withTotal(usage: FakeUsage): FakeUsage {
  return { ...usage, total_tokens: usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens };
}

/** The SSE chunks (`data:` payloads) for a stream reply, usage last when requested. */
function streamChunks(scripted: FakeStreamReply, body: ChatCompletionBody, id: string): Record<string, unknown>[] {
  const created = Math.floor(Date.now() / 1000);
  const model = body.model;
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> => ({
    id,
    object: "chat.completion.chunk",
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });
  const chunks: Record<string, unknown>[] = [chunk({ role: "assistant", content: "" })];
  let produced = 0;
  for (const delta of splitDeltas(scripted.reasoning ?? [])) {
    chunks.push(chunk({ reasoning_content: delta }));
    produced++;
  }
  for (const delta of splitDeltas(scripted.text ?? [])) {
    chunks.push(chunk({ content: delta }));
    produced++;
  }
  (scripted.toolCalls ?? []).forEach((call, index) => {
    const fragments = splitFragments(call.arguments, scripted.argumentFragments ?? 3);
    chunks.push(chunk({ tool_calls: [{ index, id: call.id ?? `call_${index}`, type: "function", function: { name: call.name, arguments: "" } }] }));
    for (const fragment of fragments) chunks.push(chunk({ tool_calls: [{ index, function: { arguments: fragment } }] }));
    produced += fragments.length;
  });
  const finishReason = scripted.finishReason ?? ((scripted.toolCalls?.length ?? 0) > 0 ? "tool_calls" : "stop");
  chunks.push(chunk({}, finishReason));
  if (body.stream_options?.include_usage && scripted.usage !== null) {
    chunks.push({ id, object: "chat.completion.chunk", created, model, choices: [], usage: withTotal(scripted.usage ?? defaultUsage(body, produced)) });
  }
  return chunks;
}

/** The one-body answer for a non-streaming request. */
function completionBody(scripted: FakeStreamReply, body: ChatCompletionBody, id: string): Record<string, unknown> {
  const text = splitDeltas(scripted.text ?? []).join("");
  const reasoning = splitDeltas(scripted.reasoning ?? []).join("");
  const toolCalls = (scripted.toolCalls ?? []).map((call, index) => ({
    id: call.id ?? `call_${index}`,
    type: "function",
    function: { name: call.name, arguments: call.arguments },
  }));
  const message: Record<string, unknown> = { role: "assistant", content: text === "" && toolCalls.length > 0 ? null : text };
  if (reasoning) message.reasoning_content = reasoning;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  const result: Record<string, unknown> = {
    id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [{ index: 0, message, finish_reason: scripted.finishReason ?? (toolCalls.length > 0 ? "tool_calls" : "stop") }],
  };
  if (scripted.usage !== null) result.usage = withTotal(scripted.usage ?? defaultUsage(body, splitDeltas(scripted.text ?? []).length));
  return result;
}

/** Writes a {@link FakeTrickleReply} as chat-completions SSE chunks until it is done or the connection closes. */
function trickle(response: ServerResponse, scripted: FakeTrickleReply, model: string, id: string): void {
  const created = Math.floor(Date.now() / 1000);
  const send = (delta: Record<string, unknown>, finishReason: string | null = null) =>
    response.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`);
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  send({ role: "assistant", content: "" });
  let sent = 0;
  const timer = setInterval(() => {
    if (scripted.chunks !== undefined && sent >= scripted.chunks) {
      clearInterval(timer);
      send({}, "stop");
      response.end("data: [DONE]\n\n");
      return;
    }
    send({ content: scripted.text });
    sent++;
  }, scripted.everyMs);
  response.on("close", () => clearInterval(timer));
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Starts a fake OpenAI-compatible server on 127.0.0.1 at a random port.
 * A request that arrives with an empty script gets HTTP 500 `no scripted reply`, so a test
 * that makes more calls than it scripted fails loudly. With `models`, `GET /v1/models`
 * lists them (OpenAI's shape; not recorded in `requests`); without, it is a 404, as on a
 * server that does not list its models.
 */
export async function startFakeOpenAI(options: { models?: readonly string[] } = {}): Promise<FakeOpenAI> {
  const stored: StoredItems = new Map();
  let sequence = 0;

  async function handle(request: IncomingMessage, response: ServerResponse, exchange: Exchange<ChatCompletionBody, FakeReplyScript>): Promise<void> {
    const raw = await readBody(request);
    const path = (request.url ?? "/").split("?")[0]!;
    // `/v1/codex/responses`: the Codex endpoint (base URL `<url>` → `<url>/codex`), same API.
    const responses = path === "/v1/responses" || path === "/v1/codex/responses";
    if (request.method === "GET" && path === "/v1/models" && options.models) {
      sendJson(response, 200, { object: "list", data: options.models.map((id) => ({ id, object: "model", created: 0, owned_by: "fake" })) });
      return;
    }
    if (request.method !== "POST" || (path !== "/v1/chat/completions" && !responses)) {
      sendJson(response, 404, { error: { message: `No route for ${request.method} ${path}`, type: "not_found" } });
      return;
    }
    let body: ChatCompletionBody;
    try {
      body = JSON.parse(raw) as ChatCompletionBody;
    } catch {
      sendJson(response, 400, { error: { message: "Request body is not JSON", type: "invalid_request_error" } });
      return;
    }
    const recorded: RecordedRequest = { method: request.method, path, headers: lowerHeaders(request), body };
    exchange.record(recorded);
    const invalid = responses ? invalidResponsesRequest(body as unknown as ResponsesBody, stored) : null;
    if (invalid) {
      sendJson(response, 400, { error: { message: invalid, type: "invalid_request_error", param: "input", code: null } });
      return;
    }
    const next = exchange.next();
    if (next === undefined) {
      sendJson(response, 500, { error: { message: "no scripted reply", type: "fake_server_error" } });
      return;
    }
    const scripted = typeof next === "function" ? next(recorded) : next;
    if (scripted.kind === "hang") return; // left open: close() destroys the socket
    if (scripted.kind === "trickle") {
      trickle(response, scripted, body.model, `chatcmpl-fake-${++sequence}`);
      return;
    }
    if (scripted.kind === "error") {
      const errorBody = { error: { message: scripted.message, type: scripted.type ?? "api_error", param: null, code: scripted.code ?? null } };
      sendJson(response, scripted.status, errorBody, scripted.headers);
      return;
    }
    if (scripted.delayMs) await delay(scripted.delayMs);
    if (scripted.waitFor) await scripted.waitFor.catch(() => undefined);
    const id = `${responses ? "resp" : "chatcmpl"}-fake-${++sequence}`;
    if (scripted.dropAfterChunks === 0) {
      request.socket.destroy();
      return;
    }
    if (body.stream !== true) {
      sendJson(response, 200, responses ? responsesBody(scripted, body, id, stored) : completionBody(scripted, body, id));
      return;
    }
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    const chunks = responses ? responsesEvents(scripted, body, id, stored) : streamChunks(scripted, body, id);
    let sent = 0;
    for (const chunk of chunks) {
      if (scripted.malformedAfterChunks !== undefined && sent >= scripted.malformedAfterChunks) {
        response.end(`data: {"id": "${id}", "choices": [{"delta": {"content": "cut\n\n`);
        return;
      }
      if (scripted.dropAfterChunks !== undefined && sent >= scripted.dropAfterChunks) {
        // Make sure what was written reaches the client before the connection dies.
        await new Promise<void>((resolve) => response.write("", () => resolve()));
        request.socket.destroy();
        return;
      }
      response.write(`${responses ? `event: ${String(chunk.type)}\n` : ""}data: ${JSON.stringify(chunk)}\n\n`);
      sent++;
    }
    response.end(responses ? undefined : "data: [DONE]\n\n");
  }

  return startScriptedServer(handle, (response, error) => sendJson(response, 500, { error: { message: String(error), type: "fake_server_error" } }));
}
