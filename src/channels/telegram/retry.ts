/**
 * Retries for Bot API calls: Telegram asks bots to slow down with 429 + `retry_after`, and
 * its servers and networks fail now and then. A call is retried on 429 (after the time
 * Telegram asks for), 5xx and network failures, with exponential backoff otherwise.
 */
import type { Transformer } from "grammy";
import { createLogger } from "../../kernel/log.ts";

const log = createLogger("bub:telegram");

/** How Bot API calls are retried. */
export interface RetryOptions {
  /** Total tries per call, the first included (default 4). */
  attempts?: number;
  /** First backoff for 5xx and network failures, doubled each time (default 500 ms). */
  baseDelayMs?: number;
  /** Longest wait between tries, `retry_after` included (default 60 s). */
  maxDelayMs?: number;
}

function wait(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * A grammY API transformer that retries failed calls (`getUpdates` is left to grammY's own
 * polling loop). After the last try the failure goes to the caller as usual.
 *
 * ```ts
 * bot.api.config.use(retryTransformer({ attempts: 5 }));
 * ```
 */
export function retryTransformer(options: RetryOptions = {}): Transformer {
  const attempts = Math.max(1, options.attempts ?? 4);
  const baseDelayMs = options.baseDelayMs ?? 500;
  const maxDelayMs = options.maxDelayMs ?? 60_000;
  return async function retry(prev, method, payload, signal) {
    if (method === "getUpdates") return prev(method, payload, signal);
    for (let attempt = 1; ; attempt++) {
      const backoff = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
      let delay: number;
      try {
        const response = await prev(method, payload, signal);
        if (response.ok || attempt >= attempts) return response;
        if (response.error_code === 429) delay = Math.min(maxDelayMs, (response.parameters?.retry_after ?? 1) * 1000);
        else if (response.error_code >= 500) delay = backoff;
        else return response;
        log.warn(`telegram.api ${method} failed (${response.error_code} ${response.description}); retry ${attempt}/${attempts - 1} in ${delay} ms`);
      } catch (error) {
        if (signal?.aborted || attempt >= attempts) throw error;
        delay = backoff;
        log.warn(`telegram.api ${method} network failure; retry ${attempt}/${attempts - 1} in ${delay} ms`, error);
      }
      await wait(delay, signal as AbortSignal | undefined);
    }
  };
}
