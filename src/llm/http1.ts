/**
 * A small HTTP/1.1 client over `node:net` / `node:tls`, for {@link httpFetch}.
 *
 * `node:http` costs a one-shot `bub run` ~1.7 ms to load and ~5 ms more the first time a
 * request goes through its client (agent, outgoing message, llhttp and incoming message code
 * all run cold). The model providers need one thing from it: send a request, read a status,
 * headers and a body that may stream for minutes. This module does that: one write for the
 * request, a parser for the response head and the three body framings (Content-Length,
 * chunked, until close), and a pool of idle keep-alive connections per origin.
 */
import type { Socket } from "node:net";
import { Readable } from "node:stream";

/** Longest response head accepted (status line and headers), like Node's own limit ×4. */
const MAX_HEAD_BYTES = 64 * 1024;
/** How long an idle connection is kept for the next request (Node's servers close after 5 s). */
const IDLE_MS = 4_000;
const CRLF = Buffer.from("\r\n");
const HEAD_END = Buffer.from("\r\n\r\n");

/** The response head. */
export interface ResponseHead {
  readonly statusCode: number;
  readonly statusMessage: string;
  /** Header names and values as received, alternating: `[name, value, name, value, …]`. */
  readonly rawHeaders: readonly string[];
  /** Lower-case name → value (repeated headers joined with `, `). */
  readonly headers: Readonly<Record<string, string>>;
  /** The server keeps the connection open after this response. */
  readonly keepAlive: boolean;
}

/** What {@link ResponseParser.feed} reports, in order. */
export type ParserEvent = { kind: "head"; head: ResponseHead } | { kind: "body"; data: Buffer } | { kind: "end"; rest: Buffer };

type Framing = { kind: "none" } | { kind: "length"; remaining: number } | { kind: "chunked" } | { kind: "close" };

/** A protocol error in a response; the connection it came from is unusable. */
export class HttpProtocolError extends Error {
  override readonly name = "HttpProtocolError";
}

/**
 * Parses one HTTP/1.x response from the bytes of a connection, fed in whatever pieces
 * they arrive in. Interim (1xx) responses are skipped. A `HEAD` request's response, 204 and
 * 304 have no body.
 */
export class ResponseParser {
  #buffered: Buffer = Buffer.alloc(0);
  #state: "head" | "body" | "chunk-size" | "chunk-data" | "chunk-end" | "trailers" | "done" = "head";
  #framing: Framing = { kind: "none" };
  #chunkLeft = 0;
  readonly #noBody: boolean;

  constructor(method: string) {
    this.#noBody = method === "HEAD";
  }

  /** True once the whole response has been read. */
  get done(): boolean {
    return this.#state === "done";
  }

  /** True when the body runs until the server closes the connection. */
  get endsAtClose(): boolean {
    return this.#framing.kind === "close";
  }

  /** Feeds the next bytes; returns what they completed. Throws {@link HttpProtocolError}. */
  feed(data: Buffer): ParserEvent[] {
    const events: ParserEvent[] = [];
    if (this.#state === "done") return events;
    let input = this.#buffered.length ? Buffer.concat([this.#buffered, data]) : data;
    this.#buffered = Buffer.alloc(0);
    while (input.length > 0 && this.#state !== "done") {
      switch (this.#state) {
        case "head": {
          const end = input.indexOf(HEAD_END);
          if (end === -1) {
            if (input.length > MAX_HEAD_BYTES) throw new HttpProtocolError(`response head longer than ${MAX_HEAD_BYTES} bytes`);
            this.#buffered = input;
            return events;
          }
          const head = parseHead(input.subarray(0, end).toString("latin1"));
          input = input.subarray(end + HEAD_END.length);
          if (head.statusCode < 200) continue; // 100 Continue, 103 Early Hints: the real response follows
          events.push({ kind: "head", head });
          this.#framing = this.#noBody || head.statusCode === 204 || head.statusCode === 304 ? { kind: "none" } : framingOf(head);
          if (this.#framing.kind === "none" || (this.#framing.kind === "length" && this.#framing.remaining === 0)) this.#state = "done";
          else this.#state = this.#framing.kind === "chunked" ? "chunk-size" : "body";
          break;
        }
        case "body": {
          const framing = this.#framing;
          if (framing.kind === "length") {
            const take = Math.min(framing.remaining, input.length);
            events.push({ kind: "body", data: input.subarray(0, take) });
            framing.remaining -= take;
            input = input.subarray(take);
            if (framing.remaining === 0) this.#state = "done";
          } else {
            events.push({ kind: "body", data: input });
            input = input.subarray(input.length);
          }
          break;
        }
        case "chunk-size": {
          const end = input.indexOf(CRLF);
          if (end === -1) {
            if (input.length > 1024) throw new HttpProtocolError("chunk size line too long");
            this.#buffered = input;
            return events;
          }
          const line = input.subarray(0, end).toString("latin1");
          const size = /^([0-9a-fA-F]{1,12})[ \t]*(?:;.*)?$/.exec(line);
          if (!size) throw new HttpProtocolError(`bad chunk size line '${line.slice(0, 40)}'`);
          this.#chunkLeft = Number.parseInt(size[1]!, 16);
          input = input.subarray(end + CRLF.length);
          this.#state = this.#chunkLeft === 0 ? "trailers" : "chunk-data";
          break;
        }
        case "chunk-data": {
          const take = Math.min(this.#chunkLeft, input.length);
          events.push({ kind: "body", data: input.subarray(0, take) });
          this.#chunkLeft -= take;
          input = input.subarray(take);
          if (this.#chunkLeft === 0) this.#state = "chunk-end";
          break;
        }
        case "chunk-end": {
          if (input.length < CRLF.length) {
            this.#buffered = input;
            return events;
          }
          if (!input.subarray(0, CRLF.length).equals(CRLF)) throw new HttpProtocolError("chunk not followed by CRLF");
          input = input.subarray(CRLF.length);
          this.#state = "chunk-size";
          break;
        }
        case "trailers": {
          // Trailer fields are read past and dropped, up to the empty line.
          const end = input.indexOf(CRLF);
          if (end === -1) {
            if (input.length > MAX_HEAD_BYTES) throw new HttpProtocolError("trailers too long");
            this.#buffered = input;
            return events;
          }
          input = input.subarray(end + CRLF.length);
          if (end === 0) this.#state = "done";
          break;
        }
      }
    }
    if (this.#state === "done") events.push({ kind: "end", rest: input });
    return events;
  }

  /** The connection closed: completes a body that runs until close, else throws. */
  close(): ParserEvent[] {
    if (this.#state === "done") return [];
    if (this.#state === "body" && this.#framing.kind === "close") {
      this.#state = "done";
      return [{ kind: "end", rest: Buffer.alloc(0) }];
    }
    throw new HttpProtocolError(this.#state === "head" ? "connection closed before the response" : "connection closed in the middle of the body");
  }
}

function parseHead(text: string): ResponseHead {
  const lines = text.split("\r\n");
  const status = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/.exec(lines[0]!);
  if (!status) throw new HttpProtocolError(`bad status line '${lines[0]!.slice(0, 60)}'`);
  const rawHeaders: string[] = [];
  const headers: Record<string, string> = {};
  for (let index = 1; index < lines.length; index++) {
    const line = lines[index]!;
    if (line.startsWith(" ") || line.startsWith("\t")) {
      // Obsolete line folding: the line continues the previous header's value.
      if (rawHeaders.length === 0) throw new HttpProtocolError("header continuation without a header");
      const continuation = line.trim();
      rawHeaders[rawHeaders.length - 1] += ` ${continuation}`;
      const name = rawHeaders[rawHeaders.length - 2]!.toLowerCase();
      headers[name] += ` ${continuation}`; // its value (or, repeated, its last value) ends the joined one
      continue;
    }
    const colon = line.indexOf(":");
    if (colon <= 0) throw new HttpProtocolError(`bad header line '${line.slice(0, 60)}'`);
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    rawHeaders.push(name, value);
    const key = name.toLowerCase();
    headers[key] = headers[key] === undefined ? value : `${headers[key]}, ${value}`;
  }
  const connection = (headers.connection ?? "").toLowerCase();
  const keepAlive = status[1] === "1" ? !/\bclose\b/.test(connection) : /\bkeep-alive\b/.test(connection);
  return { statusCode: Number(status[2]), statusMessage: status[3] ?? "", rawHeaders, headers, keepAlive };
}

function framingOf(head: ResponseHead): Framing {
  const coding = head.headers["transfer-encoding"];
  if (coding !== undefined) {
    if (/(?:^|,)\s*chunked\s*$/i.test(coding)) return { kind: "chunked" };
    return { kind: "close" };
  }
  const length = head.headers["content-length"];
  if (length === undefined) return { kind: "close" };
  const values = new Set(length.split(",").map((value) => value.trim()));
  const [only] = values;
  if (values.size !== 1 || !/^\d{1,15}$/.test(only!)) throw new HttpProtocolError(`bad content-length '${length}'`);
  return { kind: "length", remaining: Number(only) };
}

/** A response: the head's fields and the body as a Node `Readable` (like `IncomingMessage`). */
export class Http1Response extends Readable {
  readonly statusCode: number;
  readonly statusMessage: string;
  readonly rawHeaders: readonly string[];
  readonly headers: Readonly<Record<string, string>>;
  /** The whole body arrived. */
  complete = false;
  readonly #connection: { read(): void; destroy(): void };

  /** `connection.read` asks for more bytes; `connection.destroy` drops a body nobody reads to the end. */
  constructor(head: ResponseHead, connection: { read(): void; destroy(): void }) {
    super();
    this.statusCode = head.statusCode;
    this.statusMessage = head.statusMessage;
    this.rawHeaders = head.rawHeaders;
    this.headers = head.headers;
    this.#connection = connection;
  }

  override _read(): void {
    this.#connection.read();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.complete) this.#connection.destroy();
    callback(error);
  }
}

/** One request to send. `headers` are final (lower-case names); `host` and the length are added. */
export interface Http1Request {
  readonly url: URL;
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | Uint8Array | null;
  readonly signal: AbortSignal | null;
}

/** Idle keep-alive connections per origin, and how each one leaves the pool. */
const idle = new Map<string, Socket[]>();
const leaving = new WeakMap<Socket, { drop: () => void; timer: NodeJS.Timeout }>();

function originKey(url: URL): string {
  return `${url.protocol}//${url.hostname}:${url.port || (url.protocol === "https:" ? "443" : "80")}`;
}

function takeIdle(key: string): Socket | null {
  const sockets = idle.get(key);
  while (sockets?.length) {
    const socket = sockets.pop()!;
    const exit = leaving.get(socket)!;
    leaving.delete(socket);
    socket.removeListener("close", exit.drop).removeListener("error", exit.drop).removeListener("data", exit.drop);
    clearTimeout(exit.timer);
    if (!socket.destroyed && socket.readyState === "open") return socket.ref();
    socket.destroy();
  }
  return null;
}

function putIdle(key: string, socket: Socket): void {
  const sockets = idle.get(key) ?? [];
  idle.set(key, sockets);
  sockets.push(socket);
  // A server may close an idle connection at any time, and must not send anything.
  const drop = () => {
    const at = sockets.indexOf(socket);
    if (at !== -1) sockets.splice(at, 1);
    leaving.delete(socket);
    socket.destroy();
  };
  const timer = setTimeout(drop, IDLE_MS).unref();
  leaving.set(socket, { drop, timer });
  socket.once("close", drop).once("error", drop).once("data", drop).resume().unref();
}

function connect(url: URL): Socket {
  const secure = url.protocol === "https:";
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const port = Number(url.port || (secure ? 443 : 80));
  const net = process.getBuiltinModule("node:net") as typeof import("node:net");
  if (!secure) return net.connect({ host, port, noDelay: true });
  const tls = process.getBuiltinModule("node:tls") as typeof import("node:tls");
  return tls.connect({ host, port, servername: net.isIP(host) ? undefined : host, ALPNProtocols: ["http/1.1"] });
}

/** Headers the client sets itself (the ones `fetch` does not let a caller set either). */
const OWN_HEADERS = new Set(["host", "content-length", "connection", "keep-alive", "transfer-encoding", "upgrade"]);

function requestBytes(request: Http1Request): Buffer {
  const { url, method, headers, body } = request;
  let head = `${method} ${url.pathname || "/"}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    if (OWN_HEADERS.has(name)) continue;
    if (/[\r\n\0]/.test(value)) throw new TypeError(`invalid value for header '${name}'`);
    head += `${name}: ${value}\r\n`;
  }
  if (url.username && !("authorization" in headers)) {
    head += `authorization: Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString("base64")}\r\n`;
  }
  const payload = body === null ? null : typeof body === "string" ? Buffer.from(body) : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (payload !== null || method === "POST" || method === "PUT" || method === "PATCH") head += `content-length: ${payload?.length ?? 0}\r\n`;
  head += "\r\n";
  return payload ? Buffer.concat([Buffer.from(head, "latin1"), payload]) : Buffer.from(head, "latin1");
}

/** Closes a connection nobody listens to any more; its late errors are moot. */
function discard(socket: Socket): void {
  socket.on("error", () => {}).destroy();
}

function abortError(reason: unknown): Error {
  return reason instanceof Error ? reason : new DOMException(String(reason ?? "This operation was aborted"), "AbortError");
}

/**
 * Sends `request` and resolves with the response once its head arrives; the body streams
 * from the returned `Readable`. Before the head, a network failure rejects with the socket's
 * error, a broken response with {@link HttpProtocolError}, an abort with the signal's reason;
 * after it, the body is destroyed with them. A request is never sent twice: when a pooled
 * connection turns out to be closed, the failure goes to the caller (the model client
 * retries network failures), as with Node's own agent.
 */
export function sendHttp1(request: Http1Request): Promise<Http1Response> {
  request.signal?.throwIfAborted();
  const bytes = requestBytes(request);
  const key = originKey(request.url);
  const { signal } = request;
  const socket = takeIdle(key) ?? connect(request.url);
  return new Promise((resolve, reject) => {
    const parser = new ResponseParser(request.method);
    let response: Http1Response | null = null;
    let keepAlive = false;
    let finished = false;

    const detach = () => {
      finished = true;
      socket.removeListener("data", onData).removeListener("end", onClose).removeListener("close", onClose).removeListener("error", fail);
      signal?.removeEventListener("abort", onAbort);
    };
    function fail(error: unknown) {
      if (finished) return;
      detach();
      discard(socket);
      if (response) response.destroy(error instanceof Error ? error : abortError(error));
      else reject(error);
    }
    const handle = (events: ParserEvent[]) => {
      for (const event of events) {
        if (event.kind === "head") {
          keepAlive = event.head.keepAlive;
          response = new Http1Response(event.head, {
            read: () => socket.resume(),
            destroy: () => {
              if (finished) return;
              detach();
              discard(socket);
            },
          });
          resolve(response);
        } else if (event.kind === "body") {
          if (!response!.push(event.data)) socket.pause();
        } else {
          detach();
          response!.complete = true;
          response!.push(null);
          if (keepAlive && !parser.endsAtClose && event.rest.length === 0 && !socket.destroyed) putIdle(key, socket);
          else socket.destroy();
        }
      }
    };
    function onData(data: Buffer) {
      try {
        handle(parser.feed(data));
      } catch (error) {
        fail(error);
      }
    }
    function onClose() {
      if (finished) return;
      try {
        handle(parser.close());
      } catch (error) {
        fail(error);
      }
      socket.destroy();
    }
    const onAbort = () => fail(response ? abortError(signal!.reason) : signal!.reason);

    socket.on("data", onData).on("end", onClose).on("close", onClose).on("error", fail);
    signal?.addEventListener("abort", onAbort, { once: true });
    socket.resume().write(bytes);
  });
}
