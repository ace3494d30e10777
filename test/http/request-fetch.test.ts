/**
 * bub's `fetch` over undici's `request` (src/http/request-fetch.ts) against a real HTTP
 * server on 127.0.0.1: what the AI SDK and grammY read of an answer is what undici's `fetch`
 * gives them, and failures look the same.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { Agent } from "undici";
import { requestFetch } from "../../src/http/request-fetch.ts";

/** What the server saw of each request. */
interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

describe("requestFetch", () => {
  const seen: Seen[] = [];
  const sockets = new Set<Socket>();
  /** Lets the server finish a held answer (`/slow`). */
  let release: () => void = () => {};
  const server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (body += chunk));
    request.on("end", () => {
      seen.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers, body });
      route(new URL(request.url ?? "", "http://127.0.0.1").pathname, response);
    });
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  function route(path: string, response: ServerResponse): void {
    if (path === "/json") {
      response.setHeader("set-cookie", ["a=1", "b=2"]);
      response.setHeader("content-type", "application/json");
      response.end('{"ok":true}');
    } else if (path === "/empty") {
      response.statusCode = 204;
      response.end();
    } else if (path === "/missing") {
      response.statusCode = 404;
      response.statusMessage = "Not Here";
      response.end("no such thing");
    } else if (path === "/moved") {
      response.statusCode = 307;
      response.setHeader("location", "/json?after=redirect");
      response.end();
    } else if (path === "/stream") {
      // The first event goes out at once, the rest only when the test releases it.
      response.setHeader("content-type", "text/event-stream");
      response.write("data: one\n\n");
      release = () => response.end("data: two\n\n");
    } else if (path === "/slow") {
      release = () => response.end("late");
    } else {
      response.end("?");
    }
  }

  let base = "";
  const dispatcher = new Agent();
  const fetch = requestFetch(dispatcher);
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await dispatcher.close();
  });

  it("sends the method, headers and body, and answers status, headers and body", async () => {
    const response = await fetch(`${base}/json`, { method: "post", headers: { "content-type": "application/json", "x-bub": "1" }, body: '{"q":1}' });
    assert.equal(response.status, 200);
    assert.equal(response.ok, true);
    assert.equal(response.headers.get("content-type"), "application/json");
    assert.deepEqual(response.headers.getSetCookie(), ["a=1", "b=2"]);
    assert.deepEqual(await response.json(), { ok: true });
    const request = seen.at(-1);
    assert.equal(request?.method, "POST");
    assert.equal(request?.headers["x-bub"], "1");
    assert.equal(request?.headers["content-length"], "7");
    assert.equal(request?.body, '{"q":1}');
  });

  it("takes headers as a Headers object or as pairs, and bytes as a body", async () => {
    await (await fetch(`${base}/json`, { method: "POST", headers: new Headers({ "x-form": "headers" }), body: new TextEncoder().encode("bytes") })).text();
    assert.equal(seen.at(-1)?.headers["x-form"], "headers");
    assert.equal(seen.at(-1)?.body, "bytes");
    await (await fetch(`${base}/json`, { headers: [["x-form", "pairs"]] })).text();
    assert.equal(seen.at(-1)?.headers["x-form"], "pairs");
    assert.equal(seen.at(-1)?.method, "GET");
  });

  it("answers an error status with its text, and a 204 without a body", async () => {
    const missing = await fetch(`${base}/missing`);
    assert.equal(missing.status, 404);
    assert.equal(missing.statusText, "Not Here");
    assert.equal(await missing.text(), "no such thing");
    const empty = await fetch(`${base}/empty`, { method: "DELETE" });
    assert.equal(empty.status, 204);
    assert.equal(empty.body, null);
  });

  it("follows a redirect with the same method and body", async () => {
    const response = await fetch(`${base}/moved`, { method: "POST", body: "again" });
    assert.deepEqual(await response.json(), { ok: true });
    assert.deepEqual(
      seen.slice(-2).map(({ method, url, body }) => [method, url, body]),
      [
        ["POST", "/moved", "again"],
        ["POST", "/json?after=redirect", "again"],
      ],
    );
  });

  it("streams the body as it arrives", async () => {
    const response = await fetch(`${base}/stream`);
    const reader = response.body!.getReader();
    const first = await reader.read();
    assert.equal(new TextDecoder().decode(first.value), "data: one\n\n");
    release();
    let rest = "";
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += new TextDecoder().decode(chunk.value);
    assert.equal(rest, "data: two\n\n");
  });

  it("sends a streamed body through fetch", async () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("part one, "));
        controller.enqueue(new TextEncoder().encode("part two"));
        controller.close();
      },
    });
    const response = await fetch(`${base}/json`, { method: "POST", body, duplex: "half" } as RequestInit);
    assert.deepEqual(await response.json(), { ok: true });
    assert.equal(seen.at(-1)?.body, "part one, part two");
  });

  it("rejects with the signal's reason when aborted before the answer, and stops the body when aborted during it", async () => {
    const early = new AbortController();
    const pending = fetch(`${base}/slow`, { signal: early.signal });
    setTimeout(() => early.abort(), 20);
    await assert.rejects(pending, { name: "AbortError" });
    release();

    const late = new AbortController();
    const response = await fetch(`${base}/stream`, { signal: late.signal });
    const reader = response.body!.getReader();
    await reader.read();
    late.abort();
    await assert.rejects(reader.read(), { name: "AbortError" });
    release();
  });

  it("rejects a failed connection with TypeError('fetch failed') and undici's error as the cause", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", () => resolve()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error: unknown = await fetch(`http://127.0.0.1:${port}/`).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    assert.ok(error instanceof TypeError);
    assert.equal(error.message, "fetch failed");
    assert.equal((error.cause as { code?: string }).code, "ECONNREFUSED");
  });
});
