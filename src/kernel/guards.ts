/** Small type guards shared by every layer (no imports, no side effects). */

/** True for a plain mapping: an object that is not an array (nor null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
