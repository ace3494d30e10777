/** Milliseconds (fractional) on a monotonic clock, for measuring durations. */
export function monotonicMs(): number {
  return performance.now();
}

let lastEpochMicros = 0;

/**
 * Microseconds since the Unix epoch, from the wall clock (`Date.now()`), and never earlier
 * than the last value this function returned in this process: if the system clock is set
 * back, the time stands still until the wall clock catches up.
 */
export function epochMicros(): number {
  lastEpochMicros = Math.max(lastEpochMicros, Date.now() * 1000);
  return lastEpochMicros;
}
