/**
 * One step of the agent: build the messages, let `beforeLlmCall` intercept, stream the
 * model, run its tool calls, and hand the step to the tape. The agent loop (steps,
 * handoff, steering) is built on top of this.
 */
import type { Prompt } from "../kernel/envelope.ts";
import { BubError } from "../kernel/errors.ts";
import type { LlmCallDecision, LlmCallRequest, LlmCallResult } from "../kernel/interception.ts";
import { createLogger } from "../kernel/log.ts";
import { AsyncStreamEvents, createStreamState, type StreamEvent, type StreamState, type Usage } from "../kernel/stream.ts";
import { correlated, newCorrelationId } from "../kernel/correlation.ts";
import type { Sandbox } from "../kernel/sandbox.ts";
import type { ChatMessage } from "../kernel/tape-contract.ts";
import type { TurnState } from "../kernel/types.ts";
import type { TurnContext } from "../kernel/turn-context.ts";
import type { RuntimeAgent } from "../tools/runtime-agent.ts";
import { createToolExecutor, unknownTool, type ToolCallHooks, type ToolExecutor, type ToolInvocation } from "../tools/executor.ts";
import { toModelTools, type Tool } from "../tools/tool.ts";
import { classifyModelError, isContextLengthError } from "./errors.ts";
import type { ChatToolCall, ModelToolSpec } from "./model-call.ts";
import type { ModelClient } from "./model-client.ts";
import { providerOf } from "./model-id.ts";
import { generateRunId } from "./run-id.ts";
import type { StepRecord } from "./step-record.ts";
import { isRecord } from "../kernel/guards.ts";

const log = createLogger("bub:llm");

/** The interception hooks a model step goes through: the model-call ones and the tool-call ones. */
export interface LlmCallHooks extends ToolCallHooks {
  /** `signal` is the step's (it aborts when the turn is cancelled). */
  beforeLlmCall(request: LlmCallRequest, state: TurnState, signal: AbortSignal): Promise<{ request: LlmCallRequest; decision: LlmCallDecision | null }>;
  afterLlmCall(request: LlmCallRequest, result: LlmCallResult, state: TurnState, signal: AbortSignal): Promise<void>;
}

/** What {@link runModelStep} needs. Everything tape-specific is injected. */
export interface ModelStepOptions<TTape = unknown> {
  /** Streams the model call (retries and fallbacks included). */
  readonly client: ModelClient;
  /** `provider:model` to call. */
  readonly model: string;
  /** The full system prompt; recorded and sent first when non-empty. */
  readonly systemPrompt?: string | null;
  /**
   * The conversation so far (read from the tape), or a function reading it. A
   * {@link BubError} thrown by the reader is recorded as a context error and ends the step.
   */
  readonly history?: readonly ChatMessage[] | (() => readonly ChatMessage[] | Promise<readonly ChatMessage[]>);
  /** This step's user prompt (text or multimodal parts). */
  readonly prompt: Prompt;
  /** Steering messages (already built prompts), sent as user messages before `prompt`. */
  readonly steering?: readonly Prompt[];
  /** Runtime tools of the step; the agent-usable ones are offered under `_` aliases. */
  readonly tools?: readonly Tool[];
  /** `max_tokens`; default the client's settings. */
  readonly maxTokens?: number | null;
  /** The turn state: read for `reasoning_effort`, handed to hooks and tools. */
  readonly state: TurnState;
  /** Interception hooks (`beforeLlmCall`, `afterLlmCall`, and the tool hooks via the executor). */
  readonly hooks?: LlmCallHooks | null;
  /** Runs tool calls; default `createToolExecutor({ hooks })`. */
  readonly executor?: ToolExecutor<TTape>;
  /** The tape handed to context tools. */
  readonly tape: TTape;
  /** Where the tools' files and shells are (`provideSandbox`); absent: the host. */
  readonly sandbox?: Sandbox;
  /** Writes the step to the tape (see `chatRecordEntries` in src/tape/tape.ts for the order). */
  readonly record: (record: StepRecord) => void | Promise<void>;
  /** Run id generator; default {@link generateRunId}. */
  readonly runId?: () => string;
  /** Cancels the model call and the tools. */
  readonly signal?: AbortSignal;
  /** The turn the step belongs to, handed to context tools (absent: a step run by hand). */
  readonly turn?: TurnContext;
  /** The agent running the step, handed to context tools. */
  readonly agent?: RuntimeAgent;
}

/** How a step ended; available on the stream once it is exhausted. */
export interface ModelStepOutcome {
  readonly runId: string;
  /** The step's `model_call_id`: what it writes (and its tools write) carries it in `meta`. */
  readonly modelCallId: string;
  /** `ok`: answered; `finished`: `beforeLlmCall` answered instead; `error`: see `error`. */
  readonly status: "ok" | "finished" | "error";
  /** All text the model streamed (also when it made tool calls), or the hook's text. */
  readonly text: string;
  readonly toolCalls: readonly ChatToolCall[];
  readonly toolResults: readonly unknown[];
  /** The last failed tool call's error (the step itself still succeeded). */
  readonly toolError: BubError | null;
  readonly usage: Usage | null;
  /** Why the step failed: the model call (after retries and fallbacks) or reading the context. */
  readonly error: BubError | null;
  /** True when `error` says the prompt exceeded the context window (hand off and retry). */
  readonly contextLengthExceeded: boolean;
  /** The `provider:model` that answered (a fallback, possibly), or the one asked. */
  readonly model: string;
  readonly finishReason: string | null;
}

/** The events of one step plus its {@link ModelStepOutcome} once consumed. */
export type ModelStepStream = AsyncStreamEvents & {
  /** Null until the stream has ended. */
  readonly outcome: ModelStepOutcome | null;
};

/** The events of one step, and its outcome once they have ended. */
class ModelStepEvents extends AsyncStreamEvents implements ModelStepStream {
  readonly #outcome: () => ModelStepOutcome | null;

  constructor(source: AsyncIterable<StreamEvent>, state: StreamState, outcome: () => ModelStepOutcome | null) {
    super(source, state);
    this.#outcome = outcome;
  }

  get outcome(): ModelStepOutcome | null {
    return this.#outcome();
  }
}

/** The decoded arguments of a tool call, or the error the model should see instead. */
function decodeArguments(call: ChatToolCall): Record<string, unknown> | BubError {
  const raw = call.function.arguments;
  if (raw.trim() === "") return {};
  let reason: string;
  try {
    const value: unknown = JSON.parse(raw);
    if (isRecord(value)) return value;
    reason = `got ${Array.isArray(value) ? "an array" : value === null ? "null" : typeof value}`;
  } catch (error) {
    reason = error instanceof Error ? error.message : String(error);
  }
  return new BubError("invalid_input", `Tool '${call.function.name}' call has malformed arguments: expected a JSON object (${reason}). Call it again with valid JSON.`, {
    details: { tool: call.function.name, arguments: raw.length > 2000 ? `${raw.slice(0, 2000)}…` : raw },
  });
}

function modelToolSpec(tool: Tool): ModelToolSpec {
  return { name: tool.name, description: tool.description, parameters: tool.inputSchema };
}

/**
 * Runs one model step (spec §6.4 steps 1–6) and streams its events:
 * `reasoning`/`text` deltas as they arrive, `usage`, then either `tool_call` and
 * `tool_result` or nothing, and finally `final`. A failed step (the model call after
 * retries and fallbacks, or reading the history) yields `error` then `final { ok: false }`
 * and does not throw; {@link ModelStepOutcome.contextLengthExceeded} tells the loop to hand
 * off. Only cancellation (an aborted `signal`) throws.
 *
 * Guarantees: `afterLlmCall` fires exactly once per real model call — after the stream
 * is consumed, or on failure — never when `beforeLlmCall` finished the step, on
 * cancellation, or when the consumer stops early. `record` is called once per step that
 * reaches its end (not on cancellation or early close), before the last events are yielded;
 * a failed call is recorded too (the prompt, the error and a `run` event with status
 * `error`), so the tape shows what was asked; text streamed before the failure is recorded
 * as the assistant message with meta `incomplete: true`. A call cut after reasoning but
 * before any text or tool call is made once more. Text streamed alongside tool calls is not
 * recorded as an answer (as in the reference), but is in {@link ModelStepOutcome.text}.
 * Malformed tool-call JSON becomes an `invalid_input` result for that call; an unknown tool
 * name becomes `Unknown tool name: <name>. Closest tool names: a, b, c.` (after `beforeToolCall` had its chance).
 *
 * ```ts
 * const step = runModelStep({ client, model, systemPrompt, history, prompt, tools, state, hooks, tape, record });
 * for await (const event of step) yield event;
 * if (step.outcome?.contextLengthExceeded) await handoff();
 * const more = (step.outcome?.toolCalls.length ?? 0) > 0;
 * ```
 */
export function runModelStep<TTape = unknown>(options: ModelStepOptions<TTape>): ModelStepStream {
  const streamState: StreamState = createStreamState();
  let outcome: ModelStepOutcome | null = null;
  const finish = (value: ModelStepOutcome) => {
    outcome = value;
    streamState.usage = value.usage;
    streamState.error = value.error;
  };
  // Everything the step writes, its tools included, carries this call's id (issue 19).
  const modelCallId = newCorrelationId();
  return new ModelStepEvents(correlated({ modelCallId }, stepEvents(options, modelCallId, finish)), streamState, () => outcome);
}

async function* stepEvents<TTape>(options: ModelStepOptions<TTape>, modelCallId: string, finish: (outcome: ModelStepOutcome) => void): AsyncGenerator<StreamEvent, void, undefined> {
  const { client, state, hooks, signal } = options;
  // What the hooks get: the step's signal, else one nobody aborts.
  const hookSignal = signal ?? new AbortController().signal;
  const runId = (options.runId ?? generateRunId)();
  const systemPrompt = options.systemPrompt ? options.systemPrompt : null;
  const newMessages: ChatMessage[] = [...(options.steering ?? []).map((content) => ({ role: "user", content })), { role: "user", content: options.prompt }];
  const base: Omit<ModelStepOutcome, "status"> = {
    runId,
    modelCallId,
    text: "",
    toolCalls: [],
    toolResults: [],
    toolError: null,
    usage: null,
    error: null,
    contextLengthExceeded: false,
    model: options.model,
    finishReason: null,
  };
  const emptyRecord = {
    runId,
    systemPrompt,
    contextError: null,
    newMessages,
    toolCalls: null,
    toolResults: null,
    error: null,
    responseText: null,
    usage: null,
    provider: providerOf(options.model),
    model: options.model,
  } satisfies StepRecord;

  // 1. The context.
  let history: readonly ChatMessage[];
  try {
    history = typeof options.history === "function" ? await options.history() : (options.history ?? []);
  } catch (error) {
    if (!BubError.isInstance(error)) throw error;
    await options.record({ ...emptyRecord, newMessages: [], contextError: error, error });
    finish({ ...base, status: "error", error, contextLengthExceeded: isContextLengthError(error) });
    yield { kind: "error", data: error.toData() };
    yield { kind: "final", data: { ok: false } };
    return;
  }
  const messages: ChatMessage[] = [...(systemPrompt ? [{ role: "system", content: systemPrompt }] : []), ...history, ...newMessages];

  // 2. Interception before the call.
  const allTools = toModelTools(options.tools ?? []);
  let request: LlmCallRequest = {
    runId,
    modelCallId,
    model: options.model,
    messages,
    toolNames: allTools.map((tool) => tool.name),
    maxTokens: options.maxTokens ?? client.settings.max_tokens,
  };
  if (hooks) {
    const answer = await hooks.beforeLlmCall(request, state, hookSignal);
    request = answer.request;
    if (answer.decision) {
      const text = answer.decision.text;
      await options.record({ ...emptyRecord, responseText: text, model: request.model, provider: providerOf(request.model) });
      finish({ ...base, status: "finished", text, model: request.model });
      yield { kind: "text", data: { delta: text } };
      yield { kind: "final", data: { ok: true, text } };
      return;
    }
  }
  const offered = new Set(request.toolNames);
  const tools = allTools.filter((tool) => offered.has(tool.name));

  // 3. The model call.
  const started = performance.now();
  let text = "";
  const toolCalls: ChatToolCall[] = [];
  let usage: Usage | null = null;
  let answeredBy = request.model;
  let finishReason: string | null = null;
  const fireAfter = async (error: BubError | null) => {
    if (!hooks) return;
    const result: LlmCallResult = {
      runId,
      text: text || null,
      toolCalls: toolCalls.map((call) => ({ ...call, function: { ...call.function } })),
      usage,
      error,
      durationMs: Math.round(performance.now() - started),
      finishReason,
      responseModel: answeredBy,
    };
    await hooks.afterLlmCall(request, result, state, hookSignal);
  };
  // A stream cut after reasoning but before any text or tool call has shown nothing of the
  // answer: the call is made once more. (A cut before any output is retried by the client.)
  for (let call = 1; ; call++) {
    let reasoned = false;
    try {
      const events = client.stream({
        model: request.model,
        messages: request.messages,
        tools: tools.map(modelToolSpec),
        maxTokens: request.maxTokens,
        reasoningEffort: state.reasoning_effort ?? null,
        signal,
      });
      for await (const event of events) {
        switch (event.type) {
          case "reasoning":
            reasoned = true;
            yield { kind: "reasoning", data: { delta: event.delta } };
            break;
          case "text":
            text += event.delta;
            yield { kind: "text", data: { delta: event.delta } };
            break;
          case "tool_call":
            toolCalls.push(event.call);
            break;
          case "finish":
            usage = event.usage;
            answeredBy = event.model;
            finishReason = event.finishReason;
            break;
        }
      }
      break;
    } catch (thrown) {
      if (signal?.aborted) throw thrown;
      let error = classifyModelError(thrown, request.model);
      await fireAfter(error);
      if (call === 1 && reasoned && text === "" && toolCalls.length === 0 && error.kind === "temporary") {
        log.warn(`model.step.retry model=${request.model} run_id=${runId} reason=stream cut before any text error=${error.message}`);
        usage = null;
        continue;
      }
      // What was streamed before the failure stays on the tape as an incomplete answer.
      const partial = text !== "";
      if (partial && error.kind === "temporary") {
        const reason = error.message.startsWith(`${request.model}: `) ? error.message.slice(request.model.length + 2) : error.message;
        error = new BubError(error.kind, `${request.model}: the response stream was cut midway (${reason}); the partial answer is kept on the tape, marked incomplete.`, {
          details: { ...error.details, incomplete: true },
          cause: error,
        });
      }
      await options.record({ ...emptyRecord, error, usage, model: request.model, provider: providerOf(request.model), responseText: partial ? text : null, incomplete: partial, elapsedMs: Math.round(performance.now() - started) });
      finish({ ...base, status: "error", text, usage, error, contextLengthExceeded: isContextLengthError(error), model: request.model });
      yield { kind: "error", data: error.toData() };
      yield { kind: "final", data: { ok: false } };
      return;
    }
  }
  const elapsedMs = Math.round(performance.now() - started);
  await fireAfter(null);
  if (usage) yield { kind: "usage", data: usage };
  const answered = { model: answeredBy, provider: providerOf(answeredBy), elapsedMs };

  // 4. No tool calls: the text is the answer.
  if (toolCalls.length === 0) {
    await options.record({ ...emptyRecord, responseText: text, usage, ...answered });
    finish({ ...base, status: "ok", text, usage, model: answeredBy, finishReason });
    yield { kind: "final", data: { ok: true, text } };
    return;
  }

  // 5. Tool calls: run them concurrently, results in call order.
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const decoded = toolCalls.map(decodeArguments);
  const invocations: ToolInvocation[] = [];
  decoded.forEach((args, index) => {
    if (BubError.isInstance(args)) {
      log.warn(`tool.call.invalid_arguments name=${toolCalls[index].function.name} run_id=${runId}`);
      return;
    }
    const name = toolCalls[index].function.name;
    invocations.push({ tool: byName.get(name) ?? unknownTool(name, byName.keys()), arguments: args, callId: toolCalls[index].id });
  });
  yield { kind: "tool_call", data: { tool_calls: toolCalls.map((call) => ({ ...call, function: { ...call.function } })) } };
  const executor = options.executor ?? createToolExecutor<TTape>({ hooks });
  const { turn, agent, sandbox } = options;
  const execution = await executor.execute(invocations, { tape: options.tape, runId, state, signal: hookSignal, ...(turn ? { turn } : {}), ...(agent ? { agent } : {}), ...(sandbox ? { sandbox } : {}) });
  const toolResults: unknown[] = [];
  const toolElapsedMs: (number | null)[] = [];
  let toolError: BubError | null = null;
  let next = 0;
  for (const args of decoded) {
    if (BubError.isInstance(args)) {
      toolElapsedMs.push(null);
      toolError = args;
      toolResults.push(args.toData());
      continue;
    }
    const index = next++;
    toolElapsedMs.push(execution.elapsedMs?.[index] ?? null);
    toolResults.push(execution.toolResults[index]);
    toolError = execution.errors[index] ?? toolError;
  }
  await options.record({ ...emptyRecord, toolCalls, callText: text || null, toolResults, toolElapsedMs, usage, ...answered });
  finish({ ...base, status: "ok", text, toolCalls, toolResults, toolError, usage, model: answeredBy, finishReason });
  yield { kind: "tool_result", data: { tool_results: toolResults } };
  yield { kind: "final", data: { ok: true, tool_calls: toolCalls.map((call) => ({ ...call, function: { ...call.function } })), tool_results: toolResults } };
}
