import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { gzipSync } from "node:zlib";
import { httpFetch, LiteHeaders } from "../../src/llm/http-fetch.ts";

type Handler = (request: IncomingMessage, body: string, response: ServerResponse) => void;

describe("httpFetch (against a loopback server)", () => {
  let server: Server;
  let base: string;
  const routes = new Map<string, Handler>();

  before(async () => {
    server = createServer((request, response) => {
      let body = "";
      request.setEncoding("utf8");
      request.on("data", (chunk: string) => (body += chunk));
      request.on("end", () => {
        const handler = routes.get(new URL(request.url!, "http://x").pathname);
        if (handler) handler(request, body, response);
        else response.writeHead(404, "Not Found").end("missing");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("posts a JSON body and reads status, headers and text like fetch", async () => {
    routes.set("/echo", (request, body, response) => {
      response.writeHead(201, "Created", { "Content-Type": "application/json", "X-Seen-Length": request.headers["content-length"] ?? "", "X-Auth": request.headers.authorization ?? "" });
      response.end(JSON.stringify({ method: request.method, body: JSON.parse(body), ua: request.headers["user-agent"] }));
    });
    const response = await httpFetch(`${base}/echo?x=1`, { method: "POST", headers: { "Content-Type": "application/json", Authorization: "Bearer k", "User-Agent": "bub" }, body: JSON.stringify({ hi: "é" }) });
    assert.equal(response.status, 201);
    assert.equal(response.statusText, "Created");
    assert.equal(response.ok, true);
    assert.equal(response.headers.get("content-type"), "application/json");
    assert.equal(response.headers.get("x-seen-length"), String(Buffer.byteLength('{"hi":"é"}')));
    assert.equal(response.headers.get("X-Auth"), "Bearer k");
    assert.deepEqual(await response.json(), { method: "POST", body: { hi: "é" }, ua: "bub" });
    assert.equal(response.bodyUsed, true);
    await assert.rejects(response.text(), /already been read/);
  });

  it("streams the body as it arrives", async () => {
    let sendSecond: () => void = () => {};
    routes.set("/sse", (_request, _body, response) => {
      response.writeHead(200, { "Content-Type": "text/event-stream" });
      response.write("data: one\n\n");
      sendSecond = () => response.end("data: two\n\n");
    });
    const response = await httpFetch(`${base}/sse`, { method: "POST", body: "{}" });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    assert.equal((await reader.read()).value, "data: one\n\n");
    sendSecond();
    assert.equal((await reader.read()).value, "data: two\n\n");
    assert.equal((await reader.read()).done, true);
  });

  it("returns error statuses with their body", async () => {
    routes.set("/limited", (_request, _body, response) => response.writeHead(429, "Too Many Requests", { "Retry-After": "3" }).end('{"error":"slow down"}'));
    const response = await httpFetch(`${base}/limited`, { method: "POST", body: "{}" });
    assert.equal(response.ok, false);
    assert.equal(response.status, 429);
    assert.equal(response.headers.get("retry-after"), "3");
    assert.equal(await response.text(), '{"error":"slow down"}');
  });

  it("decodes gzip bodies", async () => {
    routes.set("/gzip", (request, _body, response) => {
      assert.match(String(request.headers["accept-encoding"]), /gzip/);
      response.writeHead(200, { "Content-Encoding": "gzip" }).end(gzipSync("compressed hello"));
    });
    assert.equal(await (await httpFetch(`${base}/gzip`)).text(), "compressed hello");
  });

  it("follows redirects: 307 keeps the POST, 303 turns it into a GET without a body", async () => {
    routes.set("/old", (_request, _body, response) => response.writeHead(307, { Location: "/new" }).end());
    routes.set("/see-other", (_request, _body, response) => response.writeHead(303, { Location: `${base}/new` }).end());
    routes.set("/new", (request, body, response) => response.end(`${request.method} ${body}`));
    const kept = await httpFetch(`${base}/old`, { method: "POST", body: "payload" });
    assert.equal(await kept.text(), "POST payload");
    assert.equal(kept.redirected, true);
    assert.equal(kept.url, `${base}/new`);
    assert.equal(await (await httpFetch(`${base}/see-other`, { method: "POST", body: "payload" })).text(), "GET ");
    const manual = await httpFetch(`${base}/old`, { method: "POST", body: "payload", redirect: "manual" });
    assert.equal(manual.status, 307);
  });

  it("has no body for HEAD and 204", async () => {
    routes.set("/empty", (_request, _body, response) => response.writeHead(204).end());
    const response = await httpFetch(`${base}/empty`, { method: "DELETE" });
    assert.equal(response.status, 204);
    assert.equal(response.body, null);
    assert.equal(await response.text(), "");
  });

  it("rejects a refused connection with TypeError('fetch failed') and the cause", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await assert.rejects(httpFetch(`http://127.0.0.1:${port}/`), (error: Error & { cause?: { code?: string } }) => {
      assert.ok(error instanceof TypeError);
      assert.equal(error.message, "fetch failed");
      assert.equal(error.cause?.code, "ECONNREFUSED");
      return true;
    });
  });

  it("rejects with the abort reason, before the response and while reading the body", async () => {
    routes.set("/hang", (_request, _body, response) => {
      response.writeHead(200);
      response.write("partial");
    });
    const early = new AbortController();
    early.abort(new Error("stopped early"));
    await assert.rejects(httpFetch(`${base}/hang`, { signal: early.signal }), /stopped early/);

    const late = new AbortController();
    const response = await httpFetch(`${base}/hang`, { signal: late.signal });
    const reader = response.body!.getReader();
    assert.equal(new TextDecoder().decode((await reader.read()).value), "partial");
    late.abort(new Error("stopped late"));
    await assert.rejects(reader.read(), /stopped late/);
  });

  it("reports a body cut off by the server as 'terminated'", async () => {
    routes.set("/cut", (_request, _body, response) => {
      response.writeHead(200, { "Content-Length": "100" });
      response.write("short");
      setImmediate(() => response.socket?.destroy());
    });
    const response = await httpFetch(`${base}/cut`);
    await assert.rejects(response.text(), (error: Error) => error instanceof TypeError && error.message === "terminated");
  });

  it("hands requests it does not handle to the global fetch", async () => {
    routes.set("/form", (request, body, response) => response.end(`${request.headers["content-type"]?.split(";")[0]} ${body.includes("field")}`));
    const form = new FormData();
    form.set("field", "value");
    const response = await httpFetch(`${base}/form`, { method: "POST", body: form });
    assert.equal(await response.text(), "multipart/form-data true");
    assert.ok(response instanceof Response);
  });
});

describe("LiteHeaders", () => {
  it("keeps lower-case names, joins repeated values and iterates sorted like Headers", () => {
    const headers = new LiteHeaders({ "X-B": "2", "x-a": "1" });
    headers.append("X-A", "3");
    assert.deepEqual([...headers], [["x-a", "1, 3"], ["x-b", "2"]]);
    assert.deepEqual(Object.fromEntries(headers.entries()), Object.fromEntries(new Headers({ "X-B": "2", "x-a": "1, 3" }).entries()));
    headers.set("x-b", "4");
    headers.delete("x-a");
    assert.equal(headers.has("X-A"), false);
    assert.equal(headers.get("X-B"), "4");
    assert.throws(() => headers.set("bad name", "x"), /invalid header name/);
  });

  it("copies from a real Headers and passes instanceof for one", () => {
    const real = new Headers([["user-agent", "x"]]);
    assert.equal(new LiteHeaders(real).get("user-agent"), "x");
    assert.ok(real instanceof LiteHeaders);
    assert.ok(new LiteHeaders() instanceof LiteHeaders);
    assert.ok(!({ get: 1 } instanceof LiteHeaders));
  });
});
