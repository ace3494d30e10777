/**
 * One streamed model call: candidates (the model plus its fallbacks), retries of
 * temporary failures, a per-attempt timeout, and the provider's stream turned into a
 * small set of events. The runtime owns the retry policy: provider packages are called at
 * the `doStream` level, which never retries on its own. Requests go through the global
 * `fetch` with a dispatcher owned by the client (proxies, connect and idle timeouts; see
 * ./transport.ts).
 */
import { setTimeout as sleepFor } from "node:timers/promises";
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4FunctionTool, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { BubError } from "../kernel/errors.ts";
import { createLogger } from "../kernel/log.ts";
import type { Usage } from "../kernel/stream.ts";
import type { ChatMessage } from "../kernel/tape-contract.ts";
import { allCandidatesFailedError, classifyModelError, modelTimeoutError, retryAfterSeconds, type CandidateFailure } from "./errors.ts";
import { toModelPrompt, withAnthropicCacheControl } from "./messages.ts";
import { parseModelId } from "./model-id.ts";
import { createLanguageModel, resolveModelTarget, type ModelTarget } from "./providers.ts";
import { DEFAULT_MODEL_IDLE_TIMEOUT_SECONDS, type ModelSettings } from "./settings.ts";
import { createModelTransport, type ModelTransport } from "./transport.ts";
import { normalizeUsage } from "./usage.ts";

const log = createLogger("bub:llm");

/** A completed tool call, in the OpenAI chat shape; `arguments` is the model's raw JSON text. */
export type ChatToolCall = {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
};

/** A tool as the model sees it. */
export interface ModelToolSpec {
  /** Model-facing name (`fs_read`). */
  readonly name: string;
  readonly description: string;
  /** JSON schema of the arguments object. */
  readonly parameters: Readonly<Record<string, unknown>>;
}

/** What to ask the model. */
export interface ModelCallRequest {
  /** `provider:model`. */
  readonly model: string;
  /** OpenAI-style messages, system prompt included. */
  readonly messages: readonly ChatMessage[];
  readonly tools?: readonly ModelToolSpec[];
  /** `max_tokens`; null/undefined: the settings' value. */
  readonly maxTokens?: number | null;
  /** The session's reasoning effort; overrides `completion_args.reasoning_effort`. */
  readonly reasoningEffort?: string | null;
  readonly signal?: AbortSignal;
}

/** One event of a model call, in arrival order; `finish` is always last. */
export type ModelCallEvent =
  | { readonly type: "reasoning"; readonly delta: string }
  | { readonly type: "text"; readonly delta: string }
  | { readonly type: "tool_call"; readonly call: ChatToolCall }
  | {
      readonly type: "finish";
      /** Unified finish reason: `stop`, `length`, `tool-calls`, `content-filter`, `error`, `other`. */
      readonly finishReason: string;
      /** The provider's own finish reason, e.g. `tool_calls`. */
      readonly rawFinishReason: string | null;
      readonly usage: Usage | null;
      /** The candidate that answered (a fallback, possibly), `provider:model`. */
      readonly model: string;
      readonly provider: string;
    };

/** How temporary failures are retried before the next candidate is tried. */
export interface RetryPolicy {
  /** Attempts per candidate, the first included. */
  readonly maxAttempts: number;
  /** Delay before the first retry; doubled for each further one. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** Upper bound applied to a provider's `retry-after`. */
  readonly maxRetryAfterMs: number;
}

/** The default policy: 3 attempts, 0.5 s then 1 s, `retry-after` honoured up to 60 s. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({ maxAttempts: 3, baseDelayMs: 500, maxDelayMs: 8000, maxRetryAfterMs: 60_000 });

/** Options of {@link createModelClient}; all optional. */
export interface ModelClientOptions {
  /**
   * Where provider SDK key variables (`OPENAI_API_KEY`, ...) and the proxy variables
   * (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`) are read. Default `process.env`.
   */
  readonly env?: NodeJS.ProcessEnv;
  readonly retry?: Partial<RetryPolicy>;
  /** Waits between retries; injectable so tests need not wait. Must reject when `signal` aborts. */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Streams model calls for one set of {@link ModelSettings}. */
export interface ModelClient {
  readonly settings: ModelSettings;
  /** The models tried for `model`, in order: it, then each fallback not equal to it. */
  candidates(model: string): string[];
  /**
   * Streams one call. Temporary failures are retried (only while nothing has been
   * streamed), then the fallback models are tried; the last error lists every
   * candidate's failure. A server that sends nothing for `model_idle_timeout_seconds`
   * fails the attempt with a `timeout`, which goes to the fallbacks without a retry.
   *
   * @throws BubError classified by {@link classifyModelError}; the caller's own abort
   *   reason when `request.signal` aborts.
   */
  stream(request: ModelCallRequest): AsyncGenerator<ModelCallEvent, void, undefined>;
  /**
   * Releases the client's connections once the calls under way have finished. The client
   * opens new ones if it is used again.
   */
  close(): Promise<void>;
}

const REASONING_LEVELS = new Set(["provider-default", "none", "minimal", "low", "medium", "high", "xhigh", "max"]);

const CALL_SETTINGS: Readonly<Record<string, keyof LanguageModelV4CallOptions>> = {
  temperature: "temperature",
  top_p: "topP",
  topP: "topP",
  top_k: "topK",
  topK: "topK",
  presence_penalty: "presencePenalty",
  presencePenalty: "presencePenalty",
  frequency_penalty: "frequencyPenalty",
  frequencyPenalty: "frequencyPenalty",
  seed: "seed",
  stop: "stopSequences",
  stopSequences: "stopSequences",
};

/** Keys the runtime manages itself; a value in `completion_args` is ignored. */
const MANAGED = new Set(["model", "messages", "tools", "stream", "stream_options", "max_tokens", "max_completion_tokens", "maxOutputTokens"]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * `completion_args` and the reasoning effort → call settings and `providerOptions`.
 * Standard sampling keys map to AI SDK settings; `providerOptions` is merged as given;
 * `extra_body` and every other key go to this provider's options (OpenAI-compatible
 * servers and OpenRouter put them in the request body verbatim).
 */
export function completionCallOptions(
  completionArgs: Readonly<Record<string, unknown>>,
  target: Pick<ModelTarget, "family" | "optionsKey">,
  reasoningEffort: string | null | undefined,
): Partial<LanguageModelV4CallOptions> {
  const options: Record<string, unknown> = {};
  const ownOptions: Record<string, unknown> = {};
  const providerOptions: Record<string, Record<string, unknown>> = {};
  for (const [key, value] of Object.entries(completionArgs)) {
    if (value === undefined || MANAGED.has(key) || key === "reasoning_effort") continue;
    const setting = CALL_SETTINGS[key];
    if (setting) options[setting] = setting === "stopSequences" && typeof value === "string" ? [value] : value;
    else if (key === "providerOptions" && isRecord(value)) {
      for (const [provider, entry] of Object.entries(value)) if (isRecord(entry)) providerOptions[provider] = { ...providerOptions[provider], ...entry };
    } else if (key === "extra_body" && isRecord(value)) Object.assign(ownOptions, value);
    else ownOptions[key] = value;
  }
  const effortValue = reasoningEffort ?? completionArgs.reasoning_effort;
  const effort = typeof effortValue === "string" ? effortValue.trim() : "";
  if (effort && effort !== "auto") {
    if (REASONING_LEVELS.has(effort)) options.reasoning = effort;
    else if (target.family === "openai-compatible") ownOptions.reasoningEffort = effort;
    else log.warn(`model.reasoning_effort_unsupported effort=${effort} provider=${target.optionsKey}`);
  }
  if (Object.keys(ownOptions).length > 0) providerOptions[target.optionsKey] = { ...ownOptions, ...providerOptions[target.optionsKey] };
  if (Object.keys(providerOptions).length > 0) options.providerOptions = providerOptions;
  return options as Partial<LanguageModelV4CallOptions>;
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return sleepFor(ms, undefined, signal ? { signal } : undefined);
}

/** State shared between an attempt and the retry loop. */
interface AttemptState {
  /** Set once any reasoning, text or tool call has been handed to the consumer. */
  emitted: boolean;
}

class DefaultModelClient implements ModelClient {
  readonly settings: ModelSettings;
  readonly #env: NodeJS.ProcessEnv;
  readonly #retry: RetryPolicy;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #models = new Map<string, Promise<{ target: ModelTarget; model: LanguageModelV4 }>>();
  /** This client's HTTP transport, created on the first call. */
  #transport: Promise<ModelTransport> | null = null;

  constructor(settings: ModelSettings, options: ModelClientOptions) {
    this.settings = settings;
    this.#env = options.env ?? process.env;
    this.#retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.#sleep = options.sleep ?? defaultSleep;
  }

  candidates(model: string): string[] {
    const names = [model.trim()];
    for (const fallback of this.settings.fallback_models ?? []) {
      const name = typeof fallback === "string" ? fallback.trim() : "";
      if (name && !names.includes(name)) names.push(name);
    }
    return names;
  }

  /** The client's transport: its dispatcher is created on the first model call. */
  #transportFor(): Promise<ModelTransport> {
    if (!this.#transport) {
      const pending = createModelTransport({ env: this.#env, idleTimeoutSeconds: this.#idleTimeoutSeconds() });
      this.#transport = pending;
      pending.catch(() => {
        if (this.#transport === pending) this.#transport = null;
      });
    }
    return this.#transport;
  }

  /** The idle timeout in seconds, or null for none (`0` or `null`); the default when unset. */
  #idleTimeoutSeconds(): number | null {
    const seconds = this.settings.model_idle_timeout_seconds;
    if (seconds === undefined) return DEFAULT_MODEL_IDLE_TIMEOUT_SECONDS;
    return typeof seconds === "number" && seconds > 0 ? seconds : null;
  }

  async close(): Promise<void> {
    const transport = this.#transport;
    this.#transport = null;
    this.#models.clear();
    if (transport) await (await transport.catch(() => null))?.close();
  }

  /** The language model of a candidate, built once per client. */
  #model(candidate: string): Promise<{ target: ModelTarget; model: LanguageModelV4 }> {
    let entry = this.#models.get(candidate);
    if (!entry) {
      entry = (async () => {
        const target = resolveModelTarget(candidate, this.settings, this.#env);
        const { fetch } = await this.#transportFor();
        return { target, model: await createLanguageModel(target, fetch) };
      })();
      this.#models.set(candidate, entry);
      const pending = entry;
      pending.catch(() => {
        if (this.#models.get(candidate) === pending) this.#models.delete(candidate);
      });
    }
    return entry;
  }

  async *stream(request: ModelCallRequest): AsyncGenerator<ModelCallEvent, void, undefined> {
    const failures: CandidateFailure[] = [];
    const candidates = this.candidates(request.model);
    for (const [index, candidate] of candidates.entries()) {
      for (let attempt = 1; ; attempt++) {
        const state: AttemptState = { emitted: false };
        try {
          yield* this.#attempt(candidate, request, state);
          return;
        } catch (error) {
          if (request.signal?.aborted) throw error;
          const failure = classifyModelError(error, candidate, { idleTimeoutSeconds: this.#idleTimeoutSeconds() });
          if (state.emitted) throw failure;
          if (failure.kind === "temporary" && attempt < this.#retry.maxAttempts) {
            const delayMs = this.#retryDelay(failure, attempt);
            log.warn(`model.retry model=${candidate} attempt=${attempt + 1}/${this.#retry.maxAttempts} delay_ms=${delayMs} error=${failure.message}`);
            try {
              await this.#sleep(delayMs, request.signal);
            } catch (sleepError) {
              // Cancelled while waiting: surface the caller's reason, as during a call.
              throw request.signal?.aborted ? request.signal.reason : sleepError;
            }
            continue;
          }
          failures.push({ model: candidate, error: failure });
          if (index < candidates.length - 1) {
            log.warn(`model candidate failed; trying fallback model=${candidates[index + 1]} failed=${candidate} error=${failure.message}`);
          }
          break;
        }
      }
    }
    throw allCandidatesFailedError(failures);
  }

  #retryDelay(failure: BubError, attempt: number): number {
    const retryAfter = retryAfterSeconds(failure);
    if (retryAfter !== null) return Math.min(Math.round(retryAfter * 1000), this.#retry.maxRetryAfterMs);
    return Math.min(this.#retry.baseDelayMs * 2 ** (attempt - 1), this.#retry.maxDelayMs);
  }

  async *#attempt(candidate: string, request: ModelCallRequest, state: AttemptState): AsyncGenerator<ModelCallEvent, void, undefined> {
    const { target, model } = await this.#model(candidate);
    const controller = new AbortController();
    const onAbort = () => controller.abort(request.signal?.reason);
    request.signal?.addEventListener("abort", onAbort, { once: true });
    if (request.signal?.aborted) controller.abort(request.signal.reason);
    const timeoutSeconds = this.settings.model_timeout_seconds;
    let timedOut = false;
    const timer =
      timeoutSeconds !== null && timeoutSeconds !== undefined && timeoutSeconds > 0
        ? setTimeout(() => {
            timedOut = true;
            controller.abort(modelTimeoutError(candidate, timeoutSeconds));
          }, timeoutSeconds * 1000)
        : null;
    let reader: ReadableStreamDefaultReader<LanguageModelV4StreamPart> | null = null;
    try {
      const basePrompt = toModelPrompt(request.messages);
      const prompt = target.family === "anthropic" ? withAnthropicCacheControl(basePrompt) : basePrompt;
      const tools: LanguageModelV4FunctionTool[] = (request.tools ?? []).map((tool) => ({
        type: "function",
        name: tool.name,
        description: tool.description,
        inputSchema: tool.parameters as LanguageModelV4FunctionTool["inputSchema"],
      }));
      const maxTokens = request.maxTokens ?? this.settings.max_tokens;
      const options: LanguageModelV4CallOptions = {
        ...completionCallOptions(this.settings.completion_args ?? {}, target, request.reasoningEffort),
        prompt,
        ...(maxTokens ? { maxOutputTokens: maxTokens } : {}),
        ...(tools.length > 0 ? { tools } : {}),
        abortSignal: controller.signal,
      };
      const result = await model.doStream(options);
      reader = result.stream.getReader();
      for (;;) {
        const { done, value: part } = await reader.read();
        if (done) break;
        switch (part.type) {
          case "reasoning-delta":
            if (part.delta) {
              state.emitted = true;
              yield { type: "reasoning", delta: part.delta };
            }
            break;
          case "text-delta":
            if (part.delta) {
              state.emitted = true;
              yield { type: "text", delta: part.delta };
            }
            break;
          case "tool-call":
            if (part.providerExecuted) break;
            state.emitted = true;
            yield { type: "tool_call", call: { id: part.toolCallId, type: "function", function: { name: part.toolName, arguments: part.input || "{}" } } };
            break;
          case "error":
            throw part.error;
          case "stream-start":
            if (part.warnings.length > 0) log.debug(`model.warnings model=${candidate} ${JSON.stringify(part.warnings)}`);
            break;
          case "finish":
            yield {
              type: "finish",
              finishReason: part.finishReason.unified,
              rawFinishReason: part.finishReason.raw ?? null,
              usage: normalizeUsage(part.usage),
              model: target.ref.id,
              provider: target.ref.provider,
            };
            return;
          default:
            break;
        }
      }
      throw new BubError("provider", `${candidate}: the response stream ended without a finish event.`, { details: { model: candidate } });
    } catch (error) {
      if (timedOut) throw modelTimeoutError(candidate, timeoutSeconds!);
      throw error;
    } finally {
      if (timer) clearTimeout(timer);
      request.signal?.removeEventListener("abort", onAbort);
      if (reader) {
        // An early exit (consumer break, error) must not leave the HTTP response open.
        reader.cancel().catch(() => undefined);
      }
      controller.abort();
    }
  }
}

/**
 * A {@link ModelClient} for `settings`. Provider packages load on the first call.
 *
 * ```ts
 * const client = createModelClient(settings);
 * for await (const event of client.stream({ model: "openai:gpt-4o-mini", messages })) {
 *   if (event.type === "text") process.stdout.write(event.delta);
 * }
 * ```
 */
export function createModelClient(settings: ModelSettings, options: ModelClientOptions = {}): ModelClient {
  return new DefaultModelClient(settings, options);
}

/** The provider id of a `provider:model` id, or null when it is malformed. */
export function providerOf(model: string): string | null {
  try {
    return parseModelId(model).provider;
  } catch {
    return null;
  }
}
