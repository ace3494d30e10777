/**
 * The model client: streams model calls for one set of settings, trying the model and its
 * fallbacks with retries (./model-retry.ts), one attempt at a time (./model-attempt.ts).
 * The runtime owns the retry policy: provider packages are called at the `doStream` level,
 * which never retries on its own. Requests go through the global `fetch` with a dispatcher
 * owned by the client (proxies, connect and idle timeouts; see ./transport.ts).
 */
import type { LanguageModelV4 } from "@ai-sdk/provider";
import { classifyModelError } from "./errors.ts";
import type { ModelCallEvent, ModelCallRequest } from "./model-call.ts";
import { streamAttempt, type AttemptTarget } from "./model-attempt.ts";
import { DEFAULT_RETRY_POLICY, defaultSleep, fallbackCandidates, streamWithFallbacks, type RetryPolicy } from "./model-retry.ts";
import { listProviderModels } from "./model-catalog.ts";
import { createLanguageModel, resolveModelTarget, type ModelTarget } from "./providers.ts";
import { DEFAULT_MODEL_IDLE_TIMEOUT_SECONDS, type ModelSettings } from "./settings.ts";
import { createModelTransport, type ModelTransport } from "./transport.ts";

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
   * The model ids `provider` offers, from its models endpoint, over this client's transport
   * (same proxies and timeouts as model calls). See {@link listProviderModels} for the errors.
   */
  listModels(provider: string, options?: { signal?: AbortSignal }): Promise<string[]>;
  /**
   * Releases the client's connections once the calls under way have finished. The client
   * opens new ones if it is used again.
   */
  close(): Promise<void>;
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
    return fallbackCandidates(model, this.settings.fallback_models);
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
        // `openai:` with a ChatGPT sign-in goes to the Codex endpoint (./codex/model.ts).
        const codex = await import("./codex/model.ts");
        const codexTarget = await codex.resolveCodexTarget(candidate, this.settings, this.#env);
        const target = codexTarget ?? resolveModelTarget(candidate, this.settings, this.#env);
        const { fetch } = await this.#transportFor();
        return { target, model: codexTarget ? await codex.createCodexLanguageModel(codexTarget, fetch) : await createLanguageModel(target, fetch) };
      })();
      this.#models.set(candidate, entry);
      const pending = entry;
      pending.catch(() => {
        if (this.#models.get(candidate) === pending) this.#models.delete(candidate);
      });
    }
    return entry;
  }

  async listModels(provider: string, options: { signal?: AbortSignal } = {}): Promise<string[]> {
    const { fetch } = await this.#transportFor();
    return listProviderModels(provider, this.settings, fetch, { env: this.#env, signal: options.signal });
  }

  stream(request: ModelCallRequest): AsyncGenerator<ModelCallEvent, void, undefined> {
    const loop = {
      candidates: this.candidates(request.model),
      policy: this.#retry,
      sleep: this.#sleep,
      signal: request.signal,
      classify: (error: unknown, candidate: string) => classifyModelError(error, candidate, { idleTimeoutSeconds: this.#idleTimeoutSeconds() }),
    };
    // Each attempt's events go straight from its stream to the retry loop's consumer.
    return streamWithFallbacks(loop, (candidate, state) => streamAttempt(this.#attemptTarget(candidate), request, this.settings, state));
  }

  /** What an attempt on `candidate` calls: its language model, built on first use. */
  async #attemptTarget(candidate: string): Promise<AttemptTarget> {
    const { target, model } = await this.#model(candidate);
    return { candidate, target, model };
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
