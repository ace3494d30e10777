/** Small type guards shared by every layer (no imports, no side effects). */

/** True for a plain mapping: an object that is not an array (nor null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** True for a promise or anything else with a `then` method. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === "object" || typeof value === "function") && value !== null && "then" in value && typeof value.then === "function";
}
