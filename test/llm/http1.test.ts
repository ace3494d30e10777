import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { createServer as createTlsServer, type Server as TlsServer } from "node:tls";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { HttpProtocolError, ResponseParser, sendHttp1, type Http1Response, type ParserEvent } from "../../src/llm/http1.ts";
import { tempDir } from "../support/temp.ts";

/** Feeds `pieces` to a parser and returns the head, the body and what came after the end. */
function parse(method: string, pieces: Buffer[], closeAtEnd = false) {
  const parser = new ResponseParser(method);
  const events: ParserEvent[] = [];
  for (const piece of pieces) events.push(...parser.feed(piece));
  if (closeAtEnd) events.push(...parser.close());
  const head = events.find((event) => event.kind === "head");
  const body = Buffer.concat(events.flatMap((event) => (event.kind === "body" ? [event.data] : []))).toString();
  const end = events.find((event) => event.kind === "end");
  return { head: head?.kind === "head" ? head.head : null, body, ended: end !== undefined, rest: end?.kind === "end" ? end.rest.toString() : null, done: parser.done };
}

/** Every way to cut `text` in two, and one byte at a time. */
function splits(text: string): Buffer[][] {
  const bytes = Buffer.from(text);
  const ways: Buffer[][] = [];
  for (let at = 0; at <= bytes.length; at++) ways.push([bytes.subarray(0, at), bytes.subarray(at)]);
  ways.push([...bytes].map((byte) => Buffer.from([byte])));
  return ways;
}

const CHUNKED =
  "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nX-Twice: a\r\nx-twice: b\r\n\r\n" +
  "6\r\ndata: \r\n5;ext=1\r\nhello\r\n0\r\nTrailer-Field: x\r\n\r\n";

describe("ResponseParser", () => {
  it("reads a chunked body with extensions and trailers, however the bytes are cut", () => {
    for (const pieces of splits(CHUNKED)) {
      const result = parse("POST", pieces);
      assert.equal(result.body, "data: hello");
      assert.equal(result.done, true);
      assert.equal(result.head!.statusCode, 200);
      assert.equal(result.head!.statusMessage, "OK");
      assert.equal(result.head!.headers["x-twice"], "a, b");
      assert.deepEqual(result.head!.rawHeaders.slice(0, 2), ["Content-Type", "text/event-stream"]);
      assert.equal(result.head!.keepAlive, true);
    }
  });

  it("reads a Content-Length body and hands back the bytes after it", () => {
    const text = "HTTP/1.1 201 Created\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhelloEXTRA";
    for (const pieces of splits(text)) {
      const result = parse("POST", pieces);
      assert.equal(result.body, "hello");
      assert.equal(result.head!.keepAlive, false);
      if (pieces.length === 2 && pieces[0]!.length < text.indexOf("EXTRA")) assert.equal(result.rest, "EXTRA");
    }
  });

  it("reads a body without length until the connection closes", () => {
    const result = parse("GET", [Buffer.from("HTTP/1.0 200 OK\r\n\r\npart one, "), Buffer.from("part two")], true);
    assert.equal(result.body, "part one, part two");
    assert.equal(result.ended, true);
    assert.equal(result.head!.keepAlive, false);
  });

  it("skips interim responses and reads no body for HEAD, 204 and 304", () => {
    const interim = parse("POST", [Buffer.from("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")]);
    assert.equal(interim.head!.statusCode, 200);
    assert.equal(interim.body, "ok");
    assert.equal(parse("HEAD", [Buffer.from("HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n")]).done, true);
    assert.equal(parse("GET", [Buffer.from("HTTP/1.1 204 No Content\r\n\r\n")]).done, true);
    assert.equal(parse("GET", [Buffer.from("HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n")]).done, true);
    assert.equal(parse("GET", [Buffer.from("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")]).done, true);
  });

  it("joins an obsolete folded header line to the header before it", () => {
    const result = parse("GET", [Buffer.from("HTTP/1.1 200 OK\r\nX-Long: first\r\n  second\r\nContent-Length: 0\r\n\r\n")]);
    assert.equal(result.head!.headers["x-long"], "first second");
  });

  it("rejects broken responses with HttpProtocolError", () => {
    const broken = [
      "HTCPCP/1.0 418 I'm a teapot\r\n\r\n",
      "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokXX",
    ];
    for (const text of broken) assert.throws(() => parse("GET", [Buffer.from(text)]), HttpProtocolError, text);
    assert.throws(() => parse("GET", [Buffer.from(`HTTP/1.1 200 OK\r\nX-Big: ${"x".repeat(70_000)}`)]), /response head longer than/);
  });

  it("reports a connection closed before the response or inside a framed body", () => {
    assert.throws(() => parse("GET", [Buffer.from("HTTP/1.1 200 OK\r\n")], true), /before the response/);
    assert.throws(() => parse("GET", [Buffer.from("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort")], true), /middle of the body/);
    assert.throws(() => parse("GET", [Buffer.from("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab")], true), /middle of the body/);
  });
});

/** A raw TCP server answering each request with `reply(requestText, connectionNumber)`. */
describe("sendHttp1 (against a raw loopback server)", () => {
  let server: Server;
  let base: string;
  let connections = 0;
  let reply: (request: string, socket: Socket, connection: number) => void = () => {};
  const sockets = new Set<Socket>();

  before(async () => {
    server = createServer((socket) => {
      const connection = ++connections;
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      let buffered = "";
      socket.on("data", (data) => {
        buffered += data.toString("latin1");
        const headEnd = buffered.indexOf("\r\n\r\n");
        if (headEnd === -1) return;
        const length = Number(/content-length: (\d+)/i.exec(buffered.slice(0, headEnd))?.[1] ?? 0);
        if (buffered.length < headEnd + 4 + length) return;
        const request = buffered.slice(0, headEnd + 4 + length);
        buffered = buffered.slice(request.length);
        if (!socket.writableEnded) reply(request, socket, connection); // an ended connection answers nothing
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const read = async (response: Http1Response) => {
    let text = "";
    for await (const chunk of response) text += chunk;
    return text;
  };
  const request = (path: string, init: { method?: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal } = {}) =>
    sendHttp1({ url: new URL(path, base), method: init.method ?? "POST", headers: init.headers ?? {}, body: init.body ?? null, signal: init.signal ?? null });

  it("writes the request line, host, headers and length, and reuses the connection for the next request", async () => {
    const seen: string[] = [];
    reply = (text, socket) => {
      seen.push(text);
      socket.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    };
    const before = connections;
    assert.equal(await read(await request("/v1/chat?x=1", { headers: { "content-type": "application/json" }, body: '{"a":1}' })), "ok");
    assert.equal(await read(await request("/again", { body: "é" })), "ok");
    assert.equal(connections - before, 1, "one connection for both requests");
    assert.match(seen[0]!, /^POST \/v1\/chat\?x=1 HTTP\/1\.1\r\nhost: 127\.0\.0\.1:\d+\r\ncontent-type: application\/json\r\ncontent-length: 7\r\n\r\n\{"a":1\}$/);
    assert.ok(seen[1]!.endsWith(`content-length: 2\r\n\r\n${Buffer.from("é").toString("latin1")}`));
  });

  it("opens a new connection after Connection: close, and after the server drops an idle one", async () => {
    reply = (_text, socket) => socket.write("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nConnection: close\r\n\r\n1");
    await read(await request("/a"));
    const before = connections;
    reply = (_text, socket, connection) => {
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n${connection % 10}`);
      setImmediate(() => socket.end()); // closes the connection once idle
    };
    await read(await request("/b"));
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal((await read(await request("/c"))).length, 1);
    assert.equal(connections - before, 2, "neither the closed nor the dropped connection is reused");
    await new Promise((resolve) => setTimeout(resolve, 20)); // and /c's connection is gone too
  });

  it("never sends a request twice: a pooled connection the server drops fails the request", async () => {
    let requests = 0;
    reply = (_text, socket) => {
      requests++;
      socket.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    };
    await read(await request("/first"));
    reply = (_text, socket) => {
      requests++;
      socket.destroy();
    };
    await assert.rejects(request("/second"), /connection closed before the response/);
    assert.equal(requests, 2);
  });

  it("streams a chunked body sent a few bytes at a time", async () => {
    reply = (_text, socket) => {
      const bytes = Buffer.from(CHUNKED);
      let at = 0;
      const next = () => {
        if (at >= bytes.length) return;
        socket.write(bytes.subarray(at, at + 3));
        at += 3;
        setImmediate(next);
      };
      next();
    };
    const response = await request("/chunks");
    assert.equal(response.statusCode, 200);
    assert.equal(await read(response), "data: hello");
    assert.equal(response.complete, true);
  });

  it("rejects a broken response, and errors a body the server breaks", async () => {
    reply = (_text, socket) => socket.write("nonsense\r\n\r\n");
    await assert.rejects(request("/bad"), HttpProtocolError);
    reply = (_text, socket) => {
      socket.write("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\npartial");
      setImmediate(() => socket.destroy());
    };
    const response = await request("/cut");
    await assert.rejects(read(response), /middle of the body/);
  });

  it("closes the connection when the reader drops the body, and on abort", async () => {
    let closed = 0;
    reply = (_text, socket) => {
      socket.once("close", () => closed++);
      socket.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nmore\r\n");
    };
    const dropped = await request("/forever");
    dropped.destroy();
    const controller = new AbortController();
    const aborted = await request("/forever", { signal: controller.signal });
    controller.abort(new Error("stop"));
    await assert.rejects(read(aborted), /stop/);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(closed, 2);
  });

  it("refuses header values that would split the request", async () => {
    await assert.rejects(async () => request("/x", { headers: { "x-evil": "a\r\nhost: elsewhere" } }), /invalid value for header 'x-evil'/);
  });

  it("lets the process exit while a connection waits idle in the pool", async () => {
    reply = (_text, socket) => socket.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    const module = fileURLToPath(new URL("../../src/llm/http1.ts", import.meta.url));
    const script = `const { sendHttp1 } = await import(${JSON.stringify(module)}); const r = await sendHttp1({ url: new URL(${JSON.stringify(`${base}/x`)}), method: "GET", headers: {}, body: null, signal: null }); for await (const c of r) process.stdout.write(c);`;
    const started = Date.now();
    const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { timeout: 10_000 });
    assert.equal(stdout, "ok");
    assert.ok(Date.now() - started < 3_000, "exited without waiting for the idle timeout");
  });
});

describe("sendHttp1 over TLS", { skip: spawnSync("openssl", ["version"]).status === 0 ? false : "openssl is not on PATH" }, () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let server: TlsServer;
  let port: number;

  before(async () => {
    dir = await tempDir("bub-tls-");
    const key = join(dir.path, "key.pem");
    const cert = join(dir.path, "cert.pem");
    const made = spawnSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"]);
    assert.equal(made.status, 0, made.stderr.toString());
    server = createTlsServer({ key: await readFile(key), cert: await readFile(cert), ALPNProtocols: ["http/1.1"] }, (socket) => {
      const name = typeof socket.servername === "string" ? socket.servername : "";
      socket.once("data", () => socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${name.length}\r\n\r\n${name}`));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await dir.cleanup();
  });

  const fetchIn = (env: Record<string, string>) => {
    const module = fileURLToPath(new URL("../../src/llm/http1.ts", import.meta.url));
    const script = `const { sendHttp1 } = await import(${JSON.stringify(module)}); try { const r = await sendHttp1({ url: new URL("https://localhost:${port}/"), method: "GET", headers: {}, body: null, signal: null }); let t = ""; for await (const c of r) t += c; console.log("ok " + t); } catch (error) { console.log("failed " + error.code); }`;
    return promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { env: { PATH: process.env.PATH, ...env }, timeout: 10_000 });
  };

  it("verifies the certificate against the trusted CAs and sends the host name (SNI)", async () => {
    const trusted = await fetchIn({ NODE_EXTRA_CA_CERTS: join(dir.path, "cert.pem") });
    assert.equal(trusted.stdout.trim(), "ok localhost");
    const untrusted = await fetchIn({});
    assert.match(untrusted.stdout.trim(), /^failed (DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)/);
  });
});
