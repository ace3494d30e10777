/**
 * What the fake model servers share: an HTTP server on 127.0.0.1 that records every request,
 * answers from a queue of scripted replies, lets a test wait for the n-th request, and on
 * close destroys open connections (hanging requests included). Each fake supplies how a
 * request is read, checked and answered.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** One request a fake server received. */
export interface Recorded<Body> {
  method: string;
  path: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  body: Body;
}

/** A running fake server. */
export interface ScriptedServer<Body, Script> {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:41234/v1`. */
  readonly url: string;
  /** Every request received, in arrival order. */
  readonly requests: Recorded<Body>[];
  /** Appends replies to the queue. */
  script(...replies: Script[]): void;
  /** Replies still waiting in the queue. */
  pending(): number;
  /** Resolves with the request at `index` (0-based) once it has arrived. */
  waitForRequest(index: number): Promise<Recorded<Body>>;
  /** TCP connections accepted so far (a client that keeps its connection alive opens one). */
  readonly connections: number;
  /** Stops the server, destroying open connections (hanging requests included). */
  close(): Promise<void>;
}

/** What a fake's request handler gets besides the request: filing it, and the next scripted reply. */
export interface Exchange<Body, Script> {
  /** Records the request (and wakes whoever waits for it). */
  record(recorded: Recorded<Body>): void;
  /** The next scripted reply; undefined when the script is used up. */
  next(): Script | undefined;
}

/** Reads a request's body as text. */
export async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** A request's headers with lower-cased names and repeated values joined. */
export function lowerHeaders(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(request.headers)) if (value !== undefined) headers[key.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  return headers;
}

/**
 * Starts a fake on a random port of 127.0.0.1: `handle` answers each request; when it
 * throws, `failed` answers (the response is destroyed instead once headers are out).
 */
export async function startScriptedServer<Body, Script>(
  handle: (request: IncomingMessage, response: ServerResponse, exchange: Exchange<Body, Script>) => Promise<void>,
  failed: (response: ServerResponse, error: unknown) => void,
): Promise<ScriptedServer<Body, Script>> {
  const queue: Script[] = [];
  const requests: Recorded<Body>[] = [];
  const sockets = new Set<Socket>();
  let waiters: { index: number; resolve: (request: Recorded<Body>) => void }[] = [];
  const exchange: Exchange<Body, Script> = {
    record(recorded) {
      requests.push(recorded);
      waiters = waiters.filter((waiter) => {
        if (waiter.index >= requests.length) return true;
        waiter.resolve(requests[waiter.index]!);
        return false;
      });
    },
    next: () => queue.shift(),
  };
  const server = createServer((request, response) => {
    void handle(request, response, exchange).catch((error: unknown) => {
      if (!response.headersSent) failed(response, error);
      else response.destroy();
    });
  });
  let connections = 0;
  server.on("connection", (socket) => {
    connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    get connections() {
      return connections;
    },
    script: (...replies) => void queue.push(...replies),
    pending: () => queue.length,
    waitForRequest(index) {
      if (index < requests.length) return Promise.resolve(requests[index]!);
      return new Promise((resolve) => waiters.push({ index, resolve }));
    },
    close() {
      return new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      });
    },
  };
}
