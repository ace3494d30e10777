/**
 * The `fetch` that bub gives the AI SDK's providers and grammY: the Fetch API's call and
 * answer (`Request` options in, a standard `Response` out), sent with undici's `request` on a
 * dispatcher of the caller's (its proxy, timeouts and connections).
 *
 * Why not undici's `fetch` itself (Node's global one): each answer it makes is registered
 * with a `FinalizationRegistry`, and so is every signal it is given, which keeps the whole
 * request and answer alive through the young generation's collections until a full one:
 * about 13 KB moved to the old generation per call (docs/benchmarks.md). A `Response` built
 * here is not registered, and `request` frees what it holds when the answer ends; a call
 * costs about half the CPU.
 *
 * What it keeps from `fetch`: the status, headers and a streamed body; redirects followed
 * (the dispatcher's redirect interceptor, as `redirect: "follow"`); an aborted signal rejects
 * with its reason and stops the body; a failed call rejects with `TypeError("fetch failed")`
 * whose `cause` is undici's error, as `fetch` does (the AI SDK retries those). A body that is
 * not a string or bytes (a stream or a form: grammY's file uploads) is sent with `fetch` on
 * the same dispatcher. Nothing is decompressed, so no `accept-encoding` is sent.
 */
import { interceptors, type Dispatcher } from "undici";

/** The Fetch API call the providers and grammY make. */
export type FetchFunction = typeof globalThis.fetch;

/** Statuses whose answer has no body (`new Response` refuses one for them). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** The request headers as undici takes them. */
function headersOf(headers: RequestInit["headers"]): Record<string, string | undefined> | undefined {
  if (headers === undefined) return undefined;
  if (headers instanceof Headers || Array.isArray(headers)) return Object.fromEntries(new Headers(headers));
  return headers;
}

/** The answer's headers as a `Headers` (undici gives a repeated header as an array). */
function responseHeaders(raw: Record<string, string | string[] | undefined>): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (typeof value === "string") headers.append(name, value);
    else if (value) for (const item of value) headers.append(name, item);
  }
  return headers;
}

/** The URL of a `fetch` input. */
function urlOf(input: Parameters<FetchFunction>[0]): URL {
  if (input instanceof URL) return input;
  return new URL(typeof input === "string" ? input : input.url);
}

/**
 * A `fetch` that sends every call through `dispatcher` (with redirects followed).
 * `Request` objects as input are read for their URL only: pass options in `init`.
 */
export function requestFetch(dispatcher: Dispatcher): FetchFunction {
  const following = dispatcher.compose(interceptors.redirect({ maxRedirections: 20 }));
  return async (input, init = {}) => {
    const { body = null, signal = null } = init;
    if (body !== null && typeof body !== "string" && !(body instanceof Uint8Array)) {
      // Streams and forms keep fetch's encoding of them (a streamed body needs `duplex`).
      return globalThis.fetch(input, { ...init, duplex: "half", dispatcher: following });
    }
    const url = urlOf(input);
    let answer: Dispatcher.ResponseData;
    try {
      answer = await following.request({
        origin: url.origin,
        path: url.pathname + url.search,
        method: (init.method ?? "GET").toUpperCase(),
        headers: headersOf(init.headers),
        body,
        signal,
      });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw new TypeError("fetch failed", { cause: error });
    }
    const { statusCode: status, statusText, headers, body: stream } = answer;
    const empty = NULL_BODY.has(status);
    if (empty) stream.resume();
    return new Response(empty ? null : stream, { status, statusText, headers: responseHeaders(headers) });
  };
}
