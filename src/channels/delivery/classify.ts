/**
 * How a failed send is classified, and what the ledger does next. A channel turns its
 * errors into a {@link DeliveryFailure} (Telegram: ../telegram/delivery.ts); {@link nextStep}
 * decides, from the record and the failure, whether to retry (when) or give up.
 */

/**
 * A failed try:
 * - `retryable`: the request was refused or never left (rate limit with `retryAfterMs`, a
 *   server error, a connection that could not be made): trying again sends it once;
 * - `permanent`: the channel will never take it (bot blocked, chat not found, bad request);
 * - `unknown`: the connection died after the request left, so the channel may have taken it.
 */
export type DeliveryFailure = { kind: "retryable"; reason: string; retryAfterMs?: number } | { kind: "permanent"; reason: string } | { kind: "unknown"; reason: string };

/** Bounds of the retries (the `delivery` settings). */
export interface RetryPolicy {
  /** Tries before an outbound that keeps failing retryably becomes a dead letter. */
  maxAttempts: number;
  /** The wait after the first failure; doubled after each further one. */
  backoffMs: number;
  /** The longest wait between tries; a longer `retry_after` gives the outbound up at once. */
  maxBackoffMs: number;
}

/** What to do after a failed try. */
export type NextStep = { action: "retry"; delayMs: number; attempts: number; possiblyRepeated: boolean; error: string } | { action: "dead"; attempts: number; possiblyRepeated: boolean; error: string };

/**
 * Errno-style codes of a connection that failed before any request byte was sent: the
 * request certainly did not arrive.
 */
const NOT_SENT_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ENETUNREACH", "EHOSTUNREACH", "ENETDOWN", "EHOSTDOWN", "UND_ERR_CONNECT_TIMEOUT", "ERR_TLS_CERT_ALTNAME_INVALID", "CERT_HAS_EXPIRED", "UNABLE_TO_VERIFY_LEAF_SIGNATURE", "DEPTH_ZERO_SELF_SIGNED_CERT", "SELF_SIGNED_CERT_IN_CHAIN"]);

/** Every `code` on the error and its chain of causes. */
function codesOf(error: unknown): string[] {
  const codes: string[] = [];
  for (let current: unknown = error, depth = 0; current !== null && typeof current === "object" && depth < 8; depth++) {
    const code = "code" in current ? current.code : undefined;
    if (typeof code === "string") codes.push(code);
    const nested = "cause" in current && current.cause !== undefined ? current.cause : "error" in current ? current.error : undefined;
    current = nested;
  }
  return codes;
}

/**
 * A request that got no answer: `retryable` when the connection could not be made (nothing
 * left), else `unknown` (reset, closed or timed out after the request was written).
 */
export function networkFailure(error: unknown, reason: string): DeliveryFailure {
  const codes = codesOf(error);
  return codes.some((code) => NOT_SENT_CODES.has(code)) ? { kind: "retryable", reason } : { kind: "unknown", reason };
}

/** The wait before try `attempts + 1` after `attempts` failures: doubling from `backoffMs`, capped. */
export function backoffDelay(attempts: number, policy: RetryPolicy): number {
  const doubled = policy.backoffMs * 2 ** Math.max(0, Math.min(attempts - 1, 30));
  return Math.min(doubled, policy.maxBackoffMs);
}

/**
 * What follows a failed try of a record that had failed `attempts` times before:
 * a permanent failure is a dead letter at once; a retryable one is retried after the
 * backoff (or the channel's `retry_after`, when longer) until `maxAttempts` tries failed —
 * one asked to wait longer than `maxBackoffMs` is given up at once;
 * an unknown one is retried once and the record marked possibly repeated — a second
 * unknown failure of the same record is a dead letter (it may have arrived twice already).
 */
export function nextStep(record: { attempts: number; possiblyRepeated: boolean }, failure: DeliveryFailure, policy: RetryPolicy): NextStep {
  const attempts = record.attempts + 1;
  if (failure.kind === "permanent") return { action: "dead", attempts, possiblyRepeated: record.possiblyRepeated, error: failure.reason };
  if (failure.kind === "unknown") {
    if (record.possiblyRepeated) return { action: "dead", attempts, possiblyRepeated: true, error: `${failure.reason} (the connection died after the request left, again: not tried a third time)` };
    return { action: "retry", delayMs: backoffDelay(attempts, policy), attempts, possiblyRepeated: true, error: failure.reason };
  }
  if (failure.retryAfterMs !== undefined && failure.retryAfterMs > policy.maxBackoffMs) {
    return { action: "dead", attempts, possiblyRepeated: record.possiblyRepeated, error: `${failure.reason} (asked to wait ${failure.retryAfterMs / 1000} s, longer than the longest wait, ${policy.maxBackoffMs / 1000} s)` };
  }
  if (attempts >= policy.maxAttempts) return { action: "dead", attempts, possiblyRepeated: record.possiblyRepeated, error: `${failure.reason} (gave up after ${attempts} tries)` };
  return { action: "retry", delayMs: Math.max(backoffDelay(attempts, policy), failure.retryAfterMs ?? 0), attempts, possiblyRepeated: record.possiblyRepeated, error: failure.reason };
}
