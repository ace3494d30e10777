/**
 * Checks for values whose shape is not known until run time: JSON read back from a tape,
 * and errors thrown by `node:sqlite`. (Node's error codes and messages: `src/config/thrown.ts`.)
 */
import type { JsonObject } from "../kernel/tape-contract.ts";

/** True for a plain JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The primary SQLite result code (`SQLITE_BUSY`, ...) of a `node:sqlite` error; undefined for any other error. */
export function sqliteCode(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null || !("errcode" in error)) return undefined;
  return typeof error.errcode === "number" ? error.errcode & 0xff : undefined;
}
