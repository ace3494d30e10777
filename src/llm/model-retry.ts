/**
 * The retry and fallback policy of a model call: which models are tried, how often a
 * temporary failure is retried and after how long, and when to move to the next model.
 */
import { setTimeout as sleepFor } from "node:timers/promises";
import type { BubError } from "../kernel/errors.ts";
import { createLogger } from "../kernel/log.ts";
import { allCandidatesFailedError, retryAfterSeconds, type CandidateFailure } from "./errors.ts";
import type { ModelCallEvent } from "./model-call.ts";

const log = createLogger("bub:llm");

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

/** Waits `ms` between retries; rejects when `signal` aborts. */
export function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return sleepFor(ms, undefined, signal ? { signal } : undefined);
}

/** The models tried for `model`, in order: it, then each fallback not equal to it. */
export function fallbackCandidates(model: string, fallbackModels: readonly unknown[] | null | undefined): string[] {
  const names = [model.trim()];
  for (const fallback of fallbackModels ?? []) {
    const name = typeof fallback === "string" ? fallback.trim() : "";
    if (name && !names.includes(name)) names.push(name);
  }
  return names;
}

/** How long to wait before retry number `attempt`: the provider's `retry-after` (capped), else exponential backoff. */
export function retryDelay(failure: BubError, attempt: number, policy: RetryPolicy): number {
  const retryAfter = retryAfterSeconds(failure);
  if (retryAfter !== null) return Math.min(Math.round(retryAfter * 1000), policy.maxRetryAfterMs);
  return Math.min(policy.baseDelayMs * 2 ** (attempt - 1), policy.maxDelayMs);
}

/** State shared between an attempt and the retry loop. */
export interface AttemptState {
  /** Set once any reasoning, text or tool call has been handed to the consumer. */
  emitted: boolean;
}

/** What {@link streamWithFallbacks} needs besides the attempts themselves. */
export interface RetryLoop {
  readonly candidates: readonly string[];
  readonly policy: RetryPolicy;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** The caller's signal: once it aborts, its reason is thrown and nothing is retried. */
  readonly signal?: AbortSignal;
  /** Turns an attempt's error into the candidate's failure (`temporary` ones are retried). */
  readonly classify: (error: unknown, candidate: string) => BubError;
}

/**
 * Streams the first attempt that succeeds. Temporary failures are retried (only while
 * nothing has been streamed), then the next candidate is tried; when all fail, the error
 * lists every candidate's failure.
 */
export async function* streamWithFallbacks(
  loop: RetryLoop,
  runAttempt: (candidate: string, state: AttemptState) => AsyncGenerator<ModelCallEvent, void, undefined>,
): AsyncGenerator<ModelCallEvent, void, undefined> {
  const { candidates, policy, signal } = loop;
  const failures: CandidateFailure[] = [];
  for (const [index, candidate] of candidates.entries()) {
    for (let attempt = 1; ; attempt++) {
      const state: AttemptState = { emitted: false };
      try {
        yield* runAttempt(candidate, state);
        return;
      } catch (error) {
        if (signal?.aborted) throw error;
        const failure = loop.classify(error, candidate);
        if (state.emitted) throw failure;
        if (failure.kind === "temporary" && attempt < policy.maxAttempts) {
          const delayMs = retryDelay(failure, attempt, policy);
          log.warn(`model.retry model=${candidate} attempt=${attempt + 1}/${policy.maxAttempts} delay_ms=${delayMs} error=${failure.message}`);
          try {
            await loop.sleep(delayMs, signal);
          } catch (sleepError) {
            // Cancelled while waiting: surface the caller's reason, as during a call.
            throw signal?.aborted ? signal.reason : sleepError;
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
