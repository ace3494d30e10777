/** PostgreSQL and connection failures as one-line {@link BubError}s that never show the password. */
import { errorCode } from "../../config/thrown.ts";
import { BubError } from "../../kernel/errors.ts";

/** What a `postgres://` URL points at, without its credentials: `host:port/database`. */
export function describeDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const host = parsed.hostname || parsed.searchParams.get("host") || "localhost";
    const database = decodeURIComponent(parsed.pathname.replace(/^\//, "")) || decodeURIComponent(parsed.username) || "postgres";
    return `${host}:${parsed.port || "5432"}/${database}`;
  } catch {
    return "(unparsable URL)";
  }
}

/** The password a `postgres://` URL holds, or "" when it has none. */
function databaseUrlPassword(url: string): string {
  try {
    return decodeURIComponent(new URL(url).password);
  } catch {
    return "";
  }
}

/** The first line of `raw` with the URL's password cut out and the URL itself named by `host:port/database`. */
export function scrubDatabaseUrl(raw: string, url: string): string {
  const password = databaseUrlPassword(url);
  return (password ? raw.replaceAll(password, "***") : raw).replaceAll(url, describeDatabaseUrl(url)).split("\n")[0];
}

const TEMPORARY_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN", "57P01", "57P02", "57P03", "53300", "40001", "40P01"]);
const CONFIG_CODES = new Set(["28P01", "28000", "3D000", "42501", "ENOTFOUND", "3F000"]);

/**
 * `error` as a {@link BubError}: `temporary` for an unreachable or restarting server, `config`
 * for bad credentials, a missing database or missing rights, `unknown` otherwise. The
 * password, should a message contain it, is cut out.
 */
export function postgresError(error: unknown, url: string): BubError {
  if (BubError.isInstance(error)) return error;
  const where = describeDatabaseUrl(url);
  const message = scrubDatabaseUrl(error instanceof Error ? error.message || error.name : String(error), url);
  const code = String(errorCode(error) ?? "");
  const options = { details: { database: where, ...(code ? { code } : {}) }, cause: error };
  if (TEMPORARY_CODES.has(code)) {
    return new BubError("temporary", `PostgreSQL at ${where} is unreachable or busy (${message}): start it, or check BUB_DATABASE_URL, then retry.`, options);
  }
  if (CONFIG_CODES.has(code)) {
    return new BubError("config", `PostgreSQL at ${where} refused the tape store (${message}): fix the user, password or database in BUB_DATABASE_URL, or grant the user access.`, options);
  }
  return new BubError("unknown", `The tape database at ${where} failed: ${message}`, options);
}
