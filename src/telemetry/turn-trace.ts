/**
 * The spans of one turn, following the OpenTelemetry GenAI semantic conventions:
 * `invoke_agent bub` for the turn, and as its children `chat {model}` per model call and
 * `execute_tool {name}` per tool call. The parent is passed explicitly (the turn's context),
 * so concurrent turns and concurrent tool calls never mix. Loaded only with tracing on.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from "@opentelemetry/api";
import { redactJsonText, redactSecrets } from "../config/redaction.ts";
import type { LlmCallRequest, LlmCallResult, ToolCall, ToolCallResult } from "../kernel/interception.ts";
import type { TurnContext } from "../kernel/turn-context.ts";
import { inputMessages, outputMessages } from "./content.ts";

/** How a turn ended, as `bub.turn.outcome`. */
export type TurnOutcome = "ok" | "error" | "cancelled";

/** What a turn span starts with. */
export interface TurnStart {
  readonly channel: string | null;
  readonly chatId: string | null;
  readonly sessionId: string | null;
}

function isCancellation(error: unknown): boolean {
  return error instanceof Error && error.name === "AbortError";
}

/** `kind` of a BubError, else the error's name: the span's `error.type`. */
function errorType(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const kind = "kind" in error ? error.kind : undefined;
    if (typeof kind === "string" && kind !== "") return kind;
    if (error instanceof Error) return error.name || "Error";
  }
  return "_OTHER";
}

function errorMessage(error: unknown): string {
  return redactSecrets(error instanceof Error ? error.message : String(error));
}

/** Marks `span` failed: status ERROR with the (redacted) message, `error.type`, and an `exception` event without the stack. */
export function recordError(span: Span, error: unknown, time: number): void {
  const message = errorMessage(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
  span.setAttribute("error.type", errorType(error));
  span.addEvent("exception", { "exception.type": errorType(error), "exception.message": message }, time);
}

/** `provider:model` split into the provider name and the model the provider knows. */
function modelParts(id: string): { provider: string | null; model: string } {
  const at = id.indexOf(":");
  return at > 0 ? { provider: id.slice(0, at), model: id.slice(at + 1) } : { provider: null, model: id };
}

function json(value: unknown): string {
  try {
    return redactJsonText(JSON.stringify(value) ?? "null");
  } catch {
    return redactSecrets(String(value));
  }
}

/**
 * One turn's spans. Open child spans are matched by run id (model calls) and tool call id
 * (tool calls). Every time comes from one clock per turn (the wall clock at the start plus
 * the monotonic time since), so children always lie within their turn even where the wall
 * clock and the monotonic clock drift apart.
 */
export class TurnTrace {
  readonly span: Span;
  readonly #tracer: Tracer;
  readonly #context: Context;
  readonly #captureContent: boolean;
  readonly #chats = new Map<string, Span>();
  readonly #tools = new Map<string, Span[]>();
  #failure: unknown = undefined;
  #failed = false;
  #ended = false;
  readonly #wall = Date.now();
  readonly #monotonic = performance.now();
  /** The turn's context, once the pipeline has one: its id and whether a comma command failed. */
  context: TurnContext | null = null;

  constructor(tracer: Tracer, start: TurnStart, captureContent: boolean) {
    this.#tracer = tracer;
    this.#captureContent = captureContent;
    const attributes: Attributes = { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bub" };
    if (start.channel) attributes["bub.channel"] = start.channel;
    if (start.chatId) attributes["bub.chat_id"] = start.chatId;
    this.span = tracer.startSpan("invoke_agent bub", { kind: SpanKind.INTERNAL, attributes, startTime: this.#wall }, ROOT_CONTEXT);
    if (start.sessionId) this.setSession(start.sessionId);
    this.#context = trace.setSpan(ROOT_CONTEXT, this.span);
  }

  /** Now, in epoch milliseconds, on the turn's clock. */
  now(): number {
    return this.#wall + (performance.now() - this.#monotonic);
  }

  get ended(): boolean {
    return this.#ended;
  }

  setSession(sessionId: string): void {
    this.span.setAttributes({ "gen_ai.conversation.id": sessionId, "bub.session_id": sessionId });
  }

  /** A failure during the turn (a model error reported to `onError`, the turn's own error). */
  fail(error: unknown): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#failure = error;
  }

  #child(name: string, kind: SpanKind, attributes: Attributes, startTime = this.now()): Span {
    return this.#tracer.startSpan(name, { kind, attributes, startTime }, this.#context);
  }

  /** `beforeLlmCall`: opens `chat {model}`. */
  startChat(request: LlmCallRequest, startTime?: number): Span {
    const { provider, model } = modelParts(request.model);
    const attributes: Attributes = { "gen_ai.operation.name": "chat", "gen_ai.request.model": model, "bub.run_id": request.runId };
    if (provider) attributes["gen_ai.provider.name"] = provider;
    if (typeof request.maxTokens === "number") attributes["gen_ai.request.max_tokens"] = request.maxTokens;
    if (typeof request.modelCallId === "string") attributes["bub.model_call_id"] = request.modelCallId;
    const span = this.#child(`chat ${model}`, SpanKind.CLIENT, attributes, startTime);
    if (this.#captureContent) span.setAttribute("gen_ai.input.messages", json(inputMessages(request.messages)));
    this.#chats.get(request.runId)?.end(this.now());
    this.#chats.set(request.runId, span);
    return span;
  }

  /** `afterLlmCall`: usage, finish reason, the answering model and any error, then ends the span. */
  endChat(request: LlmCallRequest, result: LlmCallResult): void {
    const span = this.#chats.get(request.runId) ?? this.startChat(request, this.now() - result.durationMs);
    this.#chats.delete(request.runId);
    const usage = result.usage;
    if (typeof usage?.prompt_tokens === "number") span.setAttribute("gen_ai.usage.input_tokens", usage.prompt_tokens);
    if (typeof usage?.completion_tokens === "number") span.setAttribute("gen_ai.usage.output_tokens", usage.completion_tokens);
    // The provider's own spelling where the model client normalised it (`tool-calls` -> `tool_calls`).
    if (result.finishReason) span.setAttribute("gen_ai.response.finish_reasons", [result.finishReason.replaceAll("-", "_")]);
    if (result.responseModel) span.setAttribute("gen_ai.response.model", modelParts(result.responseModel).model);
    if (this.#captureContent && result.error === null) span.setAttribute("gen_ai.output.messages", json(outputMessages(result.text, result.toolCalls, result.finishReason ?? null)));
    if (result.error !== null && result.error !== undefined) recordError(span, result.error, this.now());
    span.end(this.now());
  }

  /** A `hook {name}` span for one plugin's implementation of a hook (`BUB_TRACE_HOOKS`). */
  startHook(hook: string, plugin: string): Span {
    return this.#child(`hook ${hook}`, SpanKind.INTERNAL, { "bub.hook.name": hook, "bub.plugin.name": plugin });
  }

  /** Ends a hook span, failed when the implementation threw. */
  endHook(span: Span, error?: unknown): void {
    if (error !== undefined) recordError(span, error, this.now());
    span.end(this.now());
  }

  #toolKey(call: ToolCall): string {
    return call.callId ?? `${call.runId}\u0000${call.tool}`;
  }

  /** `beforeToolCall`: opens `execute_tool {name}`. */
  startTool(call: ToolCall, startTime?: number): Span {
    const attributes: Attributes = { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.tool, "gen_ai.tool.type": "function", "bub.run_id": call.runId };
    if (call.callId) attributes["gen_ai.tool.call.id"] = call.callId;
    // The correlation id tape entries carry as meta.tool_call_id is the model's call id.
    if (call.callId) attributes["bub.tool_call_id"] = call.callId;
    const span = this.#child(`execute_tool ${call.tool}`, SpanKind.INTERNAL, attributes, startTime);
    const key = this.#toolKey(call);
    this.#tools.set(key, [...(this.#tools.get(key) ?? []), span]);
    return span;
  }

  /** `afterToolCall`: the arguments the tool ran with, its result or error, then ends the span. */
  endTool(call: ToolCall, result: ToolCallResult): void {
    const key = this.#toolKey(call);
    const open = this.#tools.get(key);
    const span = open?.shift() ?? this.startTool(call, this.now() - result.durationMs);
    if (open?.length === 0) this.#tools.delete(key);
    if (this.#captureContent) {
      span.setAttribute("gen_ai.tool.call.arguments", json(result.arguments));
      if (result.error === null) span.setAttribute("gen_ai.tool.call.result", typeof result.result === "string" ? redactSecrets(result.result) : json(result.result));
    }
    if (result.error !== null) recordError(span, result.error, this.now());
    span.end(this.now());
  }

  /** Ends the turn (and any child a hook left open, e.g. a model call `beforeLlmCall` finished). */
  end(error?: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    const now = this.now();
    for (const span of this.#chats.values()) span.end(now);
    for (const spans of this.#tools.values()) for (const span of spans) span.end(now);
    this.#chats.clear();
    this.#tools.clear();
    if (error !== undefined) this.fail(error);
    const turnId = this.context?.turnId;
    if (turnId) this.span.setAttribute("bub.turn_id", turnId);
    let outcome: TurnOutcome = "ok";
    if (this.#failed) outcome = isCancellation(this.#failure) ? "cancelled" : "error";
    else if (this.context?.commandFailed === true) outcome = "error";
    this.span.setAttribute("bub.turn.outcome", outcome);
    if (outcome === "error" && this.#failed) recordError(this.span, this.#failure, this.now());
    else if (outcome === "error") this.span.setStatus({ code: SpanStatusCode.ERROR, message: "the command failed" });
    this.span.end(this.now());
  }
}
