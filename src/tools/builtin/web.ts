/**
 * `web.fetch`: an HTTP GET that returns the body text. It reaches public addresses only
 * (see web-guard.ts), checks every redirect hop again, and reads at most `max_bytes` of a body.
 */
import { z } from "zod";
import { isRecord } from "../../kernel/guards.ts";
import { durationSeconds } from "../../config/duration.ts";
import { BubError } from "../../kernel/errors.ts";
import type { RuntimeAgent } from "../runtime-agent.ts";
import { defineTool, type Tool } from "../tool.ts";
import { parseAllowList, pinnedLookup, vetUrl, type AllowList, type Resolver } from "./web-guard.ts";

/** Sent unless the caller overrides it: many sites serve markdown when asked. */
export const DEFAULT_FETCH_HEADERS: Readonly<Record<string, string>> = Object.freeze({ accept: "text/markdown" });
/** Total time limit of one fetch (connect, headers and body), in seconds. */
export const DEFAULT_FETCH_TIMEOUT_SECONDS = 10;
/** Bytes of a body read when the call does not say (and the default of `BUB_WEB_FETCH_MAX_BYTES`). */
export const DEFAULT_FETCH_MAX_BYTES = 10 * 1024 * 1024;
/** Redirects followed before giving up. */
export const MAX_FETCH_REDIRECTS = 5;
/** Most characters of an error response's body quoted in the error. */
const ERROR_BODY_CHARS = 500;
/** Most bytes of an error response's body read. */
const ERROR_BODY_BYTES = 4096;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Request headers not carried to another origin on a redirect. */
const CREDENTIAL_HEADERS = new Set(["authorization", "cookie", "proxy-authorization"]);

function networkReason(error: unknown): string {
  // undici wraps the socket's error in `cause`; an AggregateError there holds one per address tried.
  const cause = isRecord(error) ? error.cause : undefined;
  const first = isRecord(cause) && Array.isArray(cause.errors) ? cause.errors[0] : undefined;
  const code = (isRecord(cause) ? cause.code : undefined) ?? (isRecord(first) ? first.code : undefined);
  if (code === "ECONNREFUSED") return "connection refused (is the server running?)";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "host not found";
  if (code === "ECONNRESET") return "connection reset by the server";
  if (code) return `${String(code)}${isRecord(cause) && cause.message ? `: ${String(cause.message)}` : ""}`;
  return String((isRecord(error) ? error.message : undefined) ?? error);
}

function checkScheme(url: URL, what: string): void {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new BubError("invalid_input", `unsupported URL scheme '${url.protocol.replace(/:$/, "")}'${what}: web.fetch reads http and https URLs`);
  }
}

/** A positive whole number from a setting's value, or null. */
function positiveInt(value: unknown): number | null {
  const number = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  return typeof number === "number" && Number.isInteger(number) && number > 0 ? number : null;
}

/** What a body read gave: its bytes and, when cut, how far. */
interface BodyRead {
  bytes: Uint8Array;
  truncated: boolean;
}

/** Reads at most `cap` bytes of `body`, then cancels it: memory stays bounded by the cap. */
async function readCapped(body: ReadableStream<Uint8Array> | null, cap: number): Promise<BodyRead> {
  if (!body) return { bytes: new Uint8Array(0), truncated: false };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let truncated = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (total + value.byteLength > cap) {
        const room = cap - total;
        if (room > 0) chunks.push(value.subarray(0, room));
        total += room;
        truncated = true;
        break;
      }
      chunks.push(value);
      total += value.byteLength;
    }
  } finally {
    if (truncated) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { bytes, truncated };
}

/** UTF-8 text of `read`; a character cut by the cap is dropped rather than garbled. */
function decode(read: BodyRead): string {
  return new TextDecoder("utf-8").decode(read.bytes, { stream: read.truncated });
}

/** The notice appended to a body cut at `cap` bytes. */
function truncationNotice(cap: number, headers: { get(name: string): string | null }): string {
  const encoding = headers.get("content-encoding");
  const length = positiveInt(headers.get("content-length"));
  const of = length !== null && (!encoding || encoding === "identity") ? `${length} bytes` : "a longer body";
  return `\n\n[web.fetch truncated the body: read the first ${cap} bytes of ${of}; max_bytes caps what is read (at most BUB_WEB_FETCH_MAX_BYTES)]`;
}

/** Options of {@link fetchText}. */
export interface FetchTextOptions {
  headers?: Record<string, string> | null;
  timeoutSeconds?: number | null;
  signal?: AbortSignal;
  /** Bytes of the body to read; default {@link DEFAULT_FETCH_MAX_BYTES} (capped by `maxBytesLimit`). */
  maxBytes?: number | null;
  /** The most `maxBytes` may be; default `BUB_WEB_FETCH_MAX_BYTES` or {@link DEFAULT_FETCH_MAX_BYTES}. */
  maxBytesLimit?: number | null;
  /** Hosts and addresses opened on purpose; default `BUB_WEB_FETCH_ALLOW_HOSTS`. */
  allowHosts?: AllowList | string | readonly string[] | null;
  /** How host names resolve (tests); default `dns.lookup`. */
  resolve?: Resolver;
}

/**
 * GETs `url` with a total timeout and returns the body text, at most `maxBytes` of it (then
 * with a notice saying so). Every hop, redirects included, must resolve to public addresses
 * only, unless its host is allowed; the connection goes to the checked addresses.
 * @throws BubError `invalid_input` for a bad URL, `tool` for a refused address, too many
 *   redirects or a non-2xx status (with the start of the body), `temporary` for a timeout
 *   or network failure.
 */
export async function fetchText(url: string, options: FetchTextOptions = {}): Promise<string> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new BubError("invalid_input", `invalid URL: ${url}`);
  }
  checkScheme(parsed, "");
  const allow =
    options.allowHosts && typeof options.allowHosts === "object" && "hosts" in options.allowHosts
      ? options.allowHosts
      : parseAllowList(options.allowHosts ?? process.env.BUB_WEB_FETCH_ALLOW_HOSTS);
  const limit = positiveInt(options.maxBytesLimit) ?? positiveInt(process.env.BUB_WEB_FETCH_MAX_BYTES) ?? DEFAULT_FETCH_MAX_BYTES;
  const cap = Math.min(positiveInt(options.maxBytes) ?? DEFAULT_FETCH_MAX_BYTES, limit);
  const timeoutSeconds = options.timeoutSeconds && options.timeoutSeconds > 0 ? options.timeoutSeconds : DEFAULT_FETCH_TIMEOUT_SECONDS;
  const timeout = AbortSignal.timeout(timeoutSeconds * 1000);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  let headers: Record<string, string> = { ...DEFAULT_FETCH_HEADERS, ...options.headers };
  // undici, not the global fetch: its Agent takes the pinned lookup. Loaded on first use.
  const undici = await import("undici");
  const dispatchers: InstanceType<typeof undici.Agent>[] = [];
  try {
    let current = parsed;
    for (let hop = 0; ; hop++) {
      const vetted = await vetUrl(current, allow, options.resolve);
      const dispatcher = new undici.Agent({ connect: { lookup: pinnedLookup(vetted) } });
      dispatchers.push(dispatcher);
      const response = await undici.fetch(current, { method: "GET", headers, signal, redirect: "manual", dispatcher });
      const location = response.headers.get("location");
      if (REDIRECT_STATUSES.has(response.status) && location) {
        await response.body?.cancel().catch(() => {});
        if (hop >= MAX_FETCH_REDIRECTS) {
          throw new BubError("tool", `GET ${url} failed: more than ${MAX_FETCH_REDIRECTS} redirects (the last to ${location})`, { details: { url } });
        }
        let next: URL;
        try {
          next = new URL(location, current);
        } catch {
          throw new BubError("tool", `GET ${url} failed: redirect to an invalid URL: ${location}`, { details: { url } });
        }
        checkScheme(next, ` in a redirect to ${next.href}`);
        if (next.origin !== current.origin) headers = Object.fromEntries(Object.entries(headers).filter(([name]) => !CREDENTIAL_HEADERS.has(name.toLowerCase())));
        current = next;
        continue;
      }
      if (!response.ok) {
        const body = decode(await readCapped(response.body, ERROR_BODY_BYTES));
        const excerpt = body.length > ERROR_BODY_CHARS ? `${body.slice(0, ERROR_BODY_CHARS)}...` : body;
        throw new BubError("tool", `GET ${url} failed: HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}${excerpt.trim() ? `\n${excerpt.trim()}` : ""}`, {
          details: { status: response.status, url },
        });
      }
      const read = await readCapped(response.body, cap);
      const text = decode(read);
      return read.truncated ? text + truncationNotice(cap, response.headers) : text;
    }
  } catch (error) {
    if (BubError.isInstance(error)) throw error;
    if (options.signal?.aborted) throw error;
    if (timeout.aborted) throw new BubError("temporary", `GET ${url} timed out after ${timeoutSeconds} seconds`, { details: { url } });
    throw new BubError("temporary", `GET ${url} failed: ${networkReason(error)}`, { details: { url }, cause: error });
  } finally {
    for (const dispatcher of dispatchers) dispatcher.destroy().catch(() => {});
  }
}

/** The allow list and byte limit from the agent's settings, else from the environment. */
function fetchSettings(agent: RuntimeAgent | undefined): { allowHosts: AllowList; maxBytesLimit: number | null } {
  const allow = agent?.configValue("web_fetch_allow_hosts") ?? process.env.BUB_WEB_FETCH_ALLOW_HOSTS;
  const limit = agent?.configValue("web_fetch_max_bytes") ?? process.env.BUB_WEB_FETCH_MAX_BYTES;
  return { allowHosts: parseAllowList(allow), maxBytesLimit: positiveInt(limit) };
}

/** The `web.fetch` tool. */
export function webTools(): Tool[] {
  return [
    defineTool({
      name: "web.fetch",
      description: "Fetch a web page with HTTP GET and return its body (markdown when the site offers it). Public addresses only.",
      parameters: () => z.object({
        url: z.string().describe("An http or https URL."),
        headers: z.record(z.string(), z.string()).nullable().optional().describe("Extra request headers."),
        timeout: durationSeconds({ integer: true }).nullable().optional().describe("Total time limit in seconds; default 10."),
        max_bytes: z.number().int().positive().nullable().optional().describe("Most bytes of the body to read; default 10 MB, at most the configured limit."),
      }),
      context: true,
      run: ({ url, headers, timeout, max_bytes }, { signal, agent }) =>
        fetchText(url, { headers, timeoutSeconds: timeout, maxBytes: max_bytes, signal, ...fetchSettings(agent) }),
    }),
  ];
}
