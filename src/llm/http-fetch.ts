/**
 * A `fetch` for the model providers over the small HTTP/1.1 client of ./http1.ts.
 *
 * Node's global `fetch` (and `Headers`, `Response`) is undici, loaded on first touch: about
 * 45 ms of a one-shot `bub run` on a cold start, more than the model call against a local
 * server. The AI SDK providers only POST a JSON string and read back a status, headers and
 * a body stream, so this client does that over a plain socket (see ./http1.ts), and
 * hands everything else (a `Request` object, a non-string body, a proxy from
 * `NODE_USE_ENV_PROXY`) to the global `fetch` unchanged.
 *
 * It behaves like `fetch` where the providers can tell: redirects are followed, network
 * failures reject with `TypeError("fetch failed", { cause })`, an abort rejects (or errors
 * the body stream) with the signal's reason, compressed bodies are decoded.
 */
import { sendHttp1, type Http1Response } from "./http1.ts";

type HeadersInput = Headers | LiteHeaders | readonly (readonly [string, string])[] | Record<string, string | readonly string[] | undefined>;

/**
 * The part of the WHATWG `Headers` the providers use, without loading undici. Names are
 * kept lower-case; iteration is sorted by name like `Headers`. `instanceof LiteHeaders` also
 * holds for a real `Headers`, so code that checks `headers instanceof Headers` keeps working
 * when the bundle swaps this class in for the global one.
 */
export class LiteHeaders {
  readonly #map = new Map<string, string>();

  constructor(init?: HeadersInput | null) {
    if (init == null) return;
    if (typeof (init as LiteHeaders).forEach === "function" && !Array.isArray(init)) {
      (init as LiteHeaders).forEach((value, name) => this.append(name, value));
    } else if (Array.isArray(init)) {
      for (const pair of init as readonly (readonly [string, string])[]) {
        if (pair.length !== 2) throw new TypeError("Headers: each header pair must be [name, value]");
        this.append(pair[0], pair[1]);
      }
    } else {
      for (const [name, value] of Object.entries(init as Record<string, string | readonly string[] | undefined>)) {
        if (value === undefined) continue;
        if (Array.isArray(value)) for (const item of value) this.append(name, item);
        else this.append(name, String(value));
      }
    }
  }

  static [Symbol.hasInstance](value: unknown): boolean {
    if (typeof value !== "object" || value === null) return false;
    if (#map in value) return true;
    const candidate = value as { get?: unknown; forEach?: unknown; has?: unknown; set?: unknown };
    return typeof candidate.get === "function" && typeof candidate.forEach === "function" && typeof candidate.has === "function" && typeof candidate.set === "function";
  }

  append(name: string, value: string): void {
    const key = headerName(name);
    const current = this.#map.get(key);
    const clean = String(value).trim();
    this.#map.set(key, current === undefined ? clean : `${current}, ${clean}`);
  }

  set(name: string, value: string): void {
    this.#map.set(headerName(name), String(value).trim());
  }

  get(name: string): string | null {
    return this.#map.get(name.toLowerCase()) ?? null;
  }

  has(name: string): boolean {
    return this.#map.has(name.toLowerCase());
  }

  delete(name: string): void {
    this.#map.delete(name.toLowerCase());
  }

  getSetCookie(): string[] {
    const value = this.#map.get("set-cookie");
    return value === undefined ? [] : [value];
  }

  forEach(callback: (value: string, name: string, headers: LiteHeaders) => void, thisArg?: unknown): void {
    for (const [name, value] of this.entries()) callback.call(thisArg, value, name, this);
  }

  *entries(): IterableIterator<[string, string]> {
    const names = [...this.#map.keys()].sort();
    for (const name of names) yield [name, this.#map.get(name)!];
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  get [Symbol.toStringTag](): string {
    return "Headers";
  }
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function headerName(name: string): string {
  if (!TOKEN.test(name)) throw new TypeError(`Headers: invalid header name '${name}'`);
  return name.toLowerCase();
}

/** What `fetch` resolves to, for the fields the providers read. */
export class LiteResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers: LiteHeaders;
  readonly url: string;
  readonly redirected: boolean;
  readonly type = "basic";
  readonly body: ReadableStream<Uint8Array> | null;
  #used = false;

  constructor(body: ReadableStream<Uint8Array> | null, init: { status: number; statusText: string; headers: LiteHeaders; url: string; redirected: boolean }) {
    this.body = body;
    this.status = init.status;
    this.statusText = init.statusText;
    this.headers = init.headers;
    this.url = init.url;
    this.redirected = init.redirected;
  }

  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }

  get bodyUsed(): boolean {
    return this.#used;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.bytes();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  async bytes(): Promise<Uint8Array> {
    if (this.#used) throw new TypeError("Body is unusable: Body has already been read");
    this.#used = true;
    if (!this.body) return new Uint8Array(0);
    const chunks: Uint8Array[] = [];
    for await (const chunk of this.body) chunks.push(chunk);
    return Buffer.concat(chunks);
  }

  async text(): Promise<string> {
    return new TextDecoder().decode(await this.bytes());
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 20;

interface Attempt {
  readonly url: URL;
  readonly method: string;
  readonly headers: LiteHeaders;
  readonly body: string | Uint8Array | null;
  readonly signal: AbortSignal | null;
}

/**
 * A `fetch` for the providers' `fetch` option. Falls back to the global `fetch` for anything
 * it does not handle itself, so it is safe to pass everywhere.
 *
 * ```ts
 * createOpenAICompatible({ name: "local", baseURL, fetch: httpFetch });
 * ```
 */
export const httpFetch = (async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const body = init?.body ?? null;
  const simpleBody = body === null || typeof body === "string" || body instanceof Uint8Array;
  const url = typeof input === "string" ? URL.parse(input) : input instanceof URL ? input : null;
  if (!url || !simpleBody || (url.protocol !== "http:" && url.protocol !== "https:") || process.env.NODE_USE_ENV_PROXY) {
    return globalThis.fetch(input, init);
  }
  const signal = init?.signal ?? null;
  signal?.throwIfAborted();
  let attempt: Attempt = {
    url,
    method: (init?.method ?? "GET").toUpperCase(),
    headers: new LiteHeaders(init?.headers as HeadersInput | undefined),
    body: body as string | Uint8Array | null,
    signal,
  };
  for (let hop = 0; ; hop++) {
    const response = await send(attempt);
    const location = response.headers.location;
    if (!REDIRECTS.has(response.statusCode ?? 0) || typeof location !== "string" || init?.redirect === "manual") {
      return toResponse(response, attempt, hop > 0) as unknown as Response;
    }
    response.resume();
    if (init?.redirect === "error" || hop >= MAX_REDIRECTS) throw new TypeError("fetch failed", { cause: new Error(`redirect ${init?.redirect === "error" ? "not allowed" : "count exceeded"}`) });
    attempt = redirected(attempt, response.statusCode!, new URL(location, attempt.url));
  }
}) as typeof fetch;

function redirected(previous: Attempt, status: number, url: URL): Attempt {
  const headers = new LiteHeaders(previous.headers);
  if (url.origin !== previous.url.origin) {
    for (const name of ["authorization", "cookie", "proxy-authorization"]) headers.delete(name);
  }
  // 303 always, and 301/302 after a POST, turn into a GET without a body (like fetch).
  if (status === 303 || ((status === 301 || status === 302) && previous.method === "POST")) {
    for (const name of ["content-type", "content-length", "content-encoding", "content-language", "content-location"]) headers.delete(name);
    return { ...previous, url, headers, method: previous.method === "HEAD" ? "HEAD" : "GET", body: null };
  }
  return { ...previous, url, headers };
}

function send(attempt: Attempt): Promise<Http1Response> {
  const { url, method, headers, body, signal } = attempt;
  const outgoing: Record<string, string> = {};
  headers.forEach((value, name) => (outgoing[name] = value));
  if (!("accept" in outgoing)) outgoing.accept = "*/*";
  if (!("accept-encoding" in outgoing)) outgoing["accept-encoding"] = "gzip, deflate, br";
  return sendHttp1({ url, method, headers: outgoing, body, signal }).catch((error: unknown) => {
    throw signal?.aborted ? signal.reason : new TypeError("fetch failed", { cause: error });
  });
}

function toResponse(response: Http1Response, attempt: Attempt, redirectedResponse: boolean): LiteResponse {
  const headers = new LiteHeaders();
  const raw = response.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2) headers.append(raw[index]!, raw[index + 1]!);
  const status = response.statusCode ?? 0;
  const empty = attempt.method === "HEAD" || status === 204 || status === 205 || status === 304;
  const body = empty ? (response.resume(), null) : bodyStream(response, headers.get("content-encoding"), attempt.signal);
  return new LiteResponse(body, { status, statusText: response.statusMessage ?? "", headers, url: attempt.url.href, redirected: redirectedResponse });
}

/** The response body as a web stream, decoded, erroring with the abort reason on abort. */
function bodyStream(response: Http1Response, encoding: string | null, signal: AbortSignal | null): ReadableStream<Uint8Array> {
  const zlib = encoding && /^(gzip|x-gzip|deflate|br)$/i.test(encoding.trim()) ? (process.getBuiltinModule("node:zlib") as typeof import("node:zlib")) : null;
  const source: NodeJS.ReadableStream & { destroy(error?: Error): void } = zlib
    ? response.pipe(
        /br/i.test(encoding!) ? zlib.createBrotliDecompress() : /deflate/i.test(encoding!) ? zlib.createInflate() : zlib.createGunzip({ flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH }),
      )
    : response;
  if (zlib) response.once("error", (error) => source.destroy(error));
  let done = false;
  let onAbort: (() => void) | null = null;
  const stop = () => {
    done = true;
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const finish = (error?: unknown) => {
        if (done) return;
        stop();
        if (error === undefined) controller.close();
        else controller.error(error);
      };
      source.on("data", (chunk: Buffer) => {
        if (done) return;
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 1) <= 0) source.pause();
      });
      source.once("end", () => finish());
      source.once("error", (error) => finish(signal?.aborted ? signal.reason : new TypeError("terminated", { cause: error })));
      response.once("close", () => {
        if (!response.complete) finish(new TypeError("terminated", { cause: new Error("other side closed") }));
      });
      if (signal) {
        onAbort = () => {
          finish(signal.reason);
          response.destroy();
        };
        signal.addEventListener("abort", onAbort, { once: true });
      }
    },
    pull() {
      source.resume();
    },
    cancel() {
      stop();
      response.destroy();
    },
  });
}
