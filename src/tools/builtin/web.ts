/** `web.fetch`: an HTTP GET that returns the body text. */
import { z } from "zod";
import { durationSeconds } from "../../config/duration.ts";
import { BubError } from "../../kernel/errors.ts";
import { defineTool, type Tool } from "../tool.ts";

/** Sent unless the caller overrides it: many sites serve markdown when asked. */
export const DEFAULT_FETCH_HEADERS: Readonly<Record<string, string>> = Object.freeze({ accept: "text/markdown" });
/** Total time limit of one fetch (connect, headers and body), in seconds. */
export const DEFAULT_FETCH_TIMEOUT_SECONDS = 10;
/** Most characters of an error response's body quoted in the error. */
const ERROR_BODY_CHARS = 500;

function networkReason(error: unknown): string {
  const cause = (error as { cause?: unknown } | null)?.cause as (NodeJS.ErrnoException & { errors?: unknown[] }) | undefined;
  const code = cause?.code ?? (cause?.errors?.[0] as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ECONNREFUSED") return "connection refused (is the server running?)";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "host not found";
  if (code === "ECONNRESET") return "connection reset by the server";
  if (code) return `${code}${cause?.message ? `: ${cause.message}` : ""}`;
  return (error as Error)?.message ?? String(error);
}

/**
 * GETs `url` with a total timeout and returns the body text.
 * @throws BubError `invalid_input` for a bad URL, `temporary` for a timeout or network
 *   failure, `tool` for a non-2xx status (with the start of the body).
 */
export async function fetchText(
  url: string,
  options: { headers?: Record<string, string> | null; timeoutSeconds?: number | null; signal?: AbortSignal } = {},
): Promise<string> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new BubError("invalid_input", `invalid URL: ${url}`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new BubError("invalid_input", `unsupported URL scheme '${parsed.protocol.replace(/:$/, "")}': web.fetch reads http and https URLs`);
  }
  const timeoutSeconds = options.timeoutSeconds && options.timeoutSeconds > 0 ? options.timeoutSeconds : DEFAULT_FETCH_TIMEOUT_SECONDS;
  const timeout = AbortSignal.timeout(timeoutSeconds * 1000);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  const headers = { ...DEFAULT_FETCH_HEADERS, ...options.headers };
  try {
    const response = await fetch(parsed, { method: "GET", headers, signal, redirect: "follow" });
    const body = await response.text();
    if (!response.ok) {
      const excerpt = body.length > ERROR_BODY_CHARS ? `${body.slice(0, ERROR_BODY_CHARS)}...` : body;
      throw new BubError("tool", `GET ${url} failed: HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}${excerpt.trim() ? `\n${excerpt.trim()}` : ""}`, {
        details: { status: response.status, url },
      });
    }
    return body;
  } catch (error) {
    if (BubError.isInstance(error)) throw error;
    if (options.signal?.aborted) throw error;
    if (timeout.aborted) throw new BubError("temporary", `GET ${url} timed out after ${timeoutSeconds} seconds`, { details: { url } });
    throw new BubError("temporary", `GET ${url} failed: ${networkReason(error)}`, { details: { url }, cause: error });
  }
}

/** The `web.fetch` tool. */
export function webTools(): Tool[] {
  return [
    defineTool({
      name: "web.fetch",
      description: "Fetch a web page with HTTP GET and return its body (markdown when the site offers it).",
      parameters: () => z.object({
        url: z.string().describe("An http or https URL."),
        headers: z.record(z.string(), z.string()).nullable().optional().describe("Extra request headers."),
        timeout: durationSeconds({ integer: true }).nullable().optional().describe("Total time limit in seconds; default 10."),
      }),
      run: ({ url, headers, timeout }, { signal }) => fetchText(url, { headers, timeoutSeconds: timeout, signal }),
    }),
  ];
}
