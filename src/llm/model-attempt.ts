/**
 * One attempt at a model call on one candidate: the call bounded by
 * `model_timeout_seconds` and the caller's signal, and the provider's stream turned into
 * {@link ModelCallEvent}s. Retrying is the caller's job (./model-retry.ts).
 */
import type { LanguageModelV4, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { BubError } from "../kernel/errors.ts";
import { createLogger } from "../kernel/log.ts";
import { buildCallOptions } from "./call-options.ts";
import { isCodexTarget } from "./codex/model.ts";
import { modelTimeoutError } from "./errors.ts";
import type { ModelCallEvent, ModelCallRequest } from "./model-call.ts";
import type { AttemptState } from "./model-retry.ts";
import type { ModelTarget } from "./providers.ts";
import { DEFAULT_MODEL_TIMEOUT_SECONDS, type ModelSettings } from "./settings.ts";
import { normalizeUsage } from "./usage.ts";

const log = createLogger("bub:llm");

/** The candidate an attempt calls, resolved to its provider's language model. */
export interface AttemptTarget {
  /** `provider:model`, as tried. */
  readonly candidate: string;
  readonly target: ModelTarget;
  readonly model: LanguageModelV4;
}

/**
 * Streams one call of `request` on `on.model` (`on` may still be being built: its failure is
 * the attempt's). Sets `state.emitted` before handing out any reasoning, text or tool call.
 * Throws the provider's error as it is, a `timeout` when `model_timeout_seconds` passes, or
 * a `provider` error when the stream ends without a finish; the connection is released
 * however the attempt ends.
 */
export async function* streamAttempt(on: AttemptTarget | Promise<AttemptTarget>, request: ModelCallRequest, settings: ModelSettings, state: AttemptState): AsyncGenerator<ModelCallEvent, void, undefined> {
  const { candidate, target, model } = await on;
  const controller = new AbortController();
  const onAbort = () => controller.abort(request.signal?.reason);
  request.signal?.addEventListener("abort", onAbort, { once: true });
  if (request.signal?.aborted) controller.abort(request.signal.reason);
  // Settings built without the key get the default bound; `0` or `null` turn it off.
  const timeoutSeconds = settings.model_timeout_seconds === undefined ? DEFAULT_MODEL_TIMEOUT_SECONDS : settings.model_timeout_seconds;
  // Set when the call ran out of time: the error the attempt then ends with.
  let timedOut: BubError | null = null;
  const timer =
    timeoutSeconds !== null && timeoutSeconds !== undefined && timeoutSeconds > 0
      ? setTimeout(() => {
          timedOut = modelTimeoutError(candidate, timeoutSeconds);
          controller.abort(timedOut);
        }, timeoutSeconds * 1000)
      : null;
  let reader: ReadableStreamDefaultReader<LanguageModelV4StreamPart> | null = null;
  let completed = false;
  try {
    const result = await model.doStream(buildCallOptions(request, target, settings, controller.signal));
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
          // The Codex endpoint's `response.incomplete` (its reason is the raw finish reason) is an error there, as in the reference.
          if (part.finishReason.raw && isCodexTarget(target)) {
            throw new BubError("provider", `${candidate}: the Codex response ended incomplete (${part.finishReason.raw}).`, { details: { model: candidate, reason: part.finishReason.raw } });
          }
          // The SDK sends `finish` once the body has ended: read the stream to its close, so
          // the response completes and its connection goes back to the pool (aborting or
          // cancelling a finished response would close the connection).
          while (!(await reader.read()).done);
          completed = true;
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
    if (timedOut) throw timedOut;
    throw error;
  } finally {
    if (timer) clearTimeout(timer);
    request.signal?.removeEventListener("abort", onAbort);
    if (!completed) {
      // An early exit (consumer break, error) must not leave the HTTP response open.
      reader?.cancel().catch(() => undefined);
      controller.abort();
    }
  }
}
