/**
 * Checks for errors thrown by `node:sqlite`. (Node's error codes and messages:
 * `src/config/thrown.ts`; a JSON object read back from a tape: the kernel's `isRecord`.)
 */

/** The primary SQLite result code (`SQLITE_BUSY`, ...) of a `node:sqlite` error; undefined for any other error. */
export function sqliteCode(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null || !("errcode" in error)) return undefined;
  return typeof error.errcode === "number" ? error.errcode & 0xff : undefined;
}

/** Whether a SQLite error says another connection holds the lock (SQLITE_BUSY or SQLITE_LOCKED). */
export function isSqliteBusy(error: unknown): boolean {
  const code = sqliteCode(error);
  return code === 5 || code === 6;
}
