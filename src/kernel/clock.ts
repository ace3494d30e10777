/**
 * Clocks that do not touch `globalThis.performance`: its first use loads Node's
 * perf_hooks modules (~1.4 ms of a one-shot `bub run`), while `process.hrtime` is part of
 * Node's bootstrap.
 */

/** Milliseconds (fractional) on a monotonic clock, for measuring durations. */
export function monotonicMs(): number {
  const [seconds, nanoseconds] = process.hrtime();
  return seconds * 1e3 + nanoseconds / 1e6;
}

/** Microseconds since the epoch: the wall clock's milliseconds, the monotonic clock's sub-millisecond digits. */
export function epochMicros(): number {
  return Date.now() * 1000 + Math.floor((process.hrtime()[1] % 1_000_000) / 1000);
}
