/**
 * The model client's HTTP transport against real servers on 127.0.0.1: the idle timeout
 * (a server that goes silent), fallbacks after it, and requests through an HTTP proxy
 * taken from HTTP_PROXY / HTTPS_PROXY.
 */
import assert from "node:assert/strict";
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { connect, createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from "node:net";
import { after, afterEach, before, describe, it } from "node:test";
import { BubError } from "../../src/kernel/errors.ts";
import type { StreamEvent } from "../../src/kernel/stream.ts";
import { classifyModelError } from "../../src/llm/errors.ts";
import type { ModelCallEvent } from "../../src/llm/model-call.ts";
import { createModelClient, type ModelClient, type ModelClientOptions } from "../../src/llm/model-client.ts";
import { runModelStep } from "../../src/llm/model-step.ts";
import { defaultModelSettings, type ModelSettings } from "../../src/llm/settings.ts";
import { CONNECT_TIMEOUT_MS, createModelTransport } from "../../src/llm/transport.ts";
import { reply } from "../support/fake-openai.ts";
import { useFakeOpenAI } from "../support/fake-openai-suite.ts";

/** A server listening on 127.0.0.1 that destroys its open connections when closed. */
async function listen<S extends TcpServer>(server: S): Promise<{ url: string; port: number; server: S; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A small HTTP proxy: CONNECT tunnels (what undici's ProxyAgent uses) and plain forwarding
 * of absolute-form requests. Every request it handles is recorded.
 */
async function startProxy() {
  const seen: { method: string; target: string; authorization: string | null }[] = [];
  const record = (request: IncomingMessage) =>
    seen.push({ method: request.method ?? "", target: request.url ?? "", authorization: request.headers["proxy-authorization"] ?? null });
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    record(request);
    const target = new URL(request.url ?? "");
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: request.method, headers: request.headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on("error", () => response.destroy());
    request.pipe(upstream);
  });
  server.on("connect", (request: IncomingMessage, client: Socket, head: Buffer) => {
    record(request);
    const [host, port] = (request.url ?? "").split(":");
    const upstream = connect(Number(port), host!, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  return { seen, ...(await listen(server)) };
}

async function collect(stream: AsyncIterable<ModelCallEvent>): Promise<ModelCallEvent[]> {
  const events: ModelCallEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

async function failure(stream: AsyncIterable<ModelCallEvent>): Promise<BubError> {
  try {
    for await (const _event of stream) continue;
  } catch (error) {
    assert.ok(BubError.isInstance(error), `expected a BubError, got ${String(error)}`);
    return error;
  }
  assert.fail("the stream did not fail");
}

const hello = { model: "fake:model-a", messages: [{ role: "user" as const, content: "hello" }] };

describe("model transport", () => {
  const server = useFakeOpenAI();
  const clients: ModelClient[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });

  function clientFor(overrides: Partial<ModelSettings> = {}, options: ModelClientOptions = {}): ModelClient {
    const settings = defaultModelSettings({ model: "fake:model-a", api_base: server.url, api_key: "sk-test", ...overrides });
    const client = createModelClient(settings, { env: {}, sleep: async () => undefined, ...options });
    clients.push(client);
    return client;
  }

  /** Runs one agent step and returns its outcome and how long it took. */
  async function step(client: ModelClient) {
    const started = performance.now();
    const stream = runModelStep({ client, model: "fake:model-a", prompt: "hello", state: {}, tape: null, record: () => undefined });
    const events: StreamEvent[] = [];
    for await (const event of stream) events.push(event);
    return { outcome: stream.outcome!, events, seconds: (performance.now() - started) / 1000 };
  }

  describe("connections", () => {
    it("keeps one connection alive across model calls that end normally", async () => {
      const client = clientFor();
      const before = server.connections;
      server.script(reply.text("one"), reply.text("two"), reply.text(["th", "ree"]));
      for (const expected of ["one", "two", "three"]) {
        const { events } = await step(client);
        assert.equal(events.filter((event) => event.kind === "text").map((event) => String(event.data.delta)).join(""), expected);
        // Turns come apart in time; back to back, the pool may not have taken the socket back yet.
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.equal(server.connections - before, 1, "the three calls shared one connection");
    });
  });

  describe("idle timeout", () => {
    it("fails a step whose server accepts the request and never answers, with a timeout naming the model and the setting", async () => {
      server.script(reply.hang());
      const { outcome, events, seconds } = await step(clientFor({ model_idle_timeout_seconds: 1 }));
      assert.equal(outcome.status, "error");
      assert.equal(outcome.error?.kind, "timeout");
      assert.equal(outcome.error?.message, "fake:model-a sent nothing for 1 s (BUB_MODEL_IDLE_TIMEOUT_SECONDS)");
      assert.deepEqual(outcome.error?.details, { model: "fake:model-a", idle_timeout: true, timeout_seconds: 1 });
      assert.deepEqual(
        events.map((event) => event.kind),
        ["error", "final"],
      );
      assert.ok(seconds >= 0.9 && seconds < 3, `failed after ${seconds.toFixed(2)} s`);
      assert.equal(server.requests.length, 1, "a timeout is not retried on the same model");
    });

    it("tries the fallback model after a timeout, and the fallback answers", async () => {
      server.script(reply.hang(), reply.text("fallback here"));
      const { outcome } = await step(clientFor({ model_idle_timeout_seconds: 1, fallback_models: ["fake:model-b"] }));
      assert.equal(outcome.status, "ok");
      assert.equal(outcome.text, "fallback here");
      assert.equal(outcome.model, "fake:model-b");
      assert.deepEqual(
        server.requests.map((request) => request.body.model),
        ["model-a", "model-b"],
      );
    });

    it("lists the timeout among the candidates' failures when the fallback fails too", async () => {
      server.script(reply.hang(), reply.error(400, "no such model"));
      const error = await failure(clientFor({ model_idle_timeout_seconds: 1, fallback_models: ["fake:model-b"] }).stream(hello));
      assert.equal(error.kind, "timeout");
      assert.match(error.message, /^All 2 model candidates failed:\n1\) fake:model-a: \[timeout\] fake:model-a sent nothing for 1 s \(BUB_MODEL_IDLE_TIMEOUT_SECONDS\)\n2\) fake:model-b: \[provider\]/);
    });

    describe("against a server that stalls inside the response", () => {
      /** What the raw server does after the status line and headers of each request. */
      let behaviour: (response: ServerResponse) => void = () => undefined;
      let raw: Awaited<ReturnType<typeof listen<Server>>>;
      before(async () => {
        raw = await listen(
          createServer((request, response) => {
            request.resume();
            request.on("end", () => {
              response.writeHead(200, { "content-type": "text/event-stream" });
              response.flushHeaders();
              behaviour(response);
            });
          }),
        );
      });
      after(() => raw.close());

      const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
        `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 0, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

      it("times out a stream that sends its headers and then nothing", async () => {
        behaviour = () => undefined;
        const client = clientFor({ api_base: `${raw.url}/v1`, model_idle_timeout_seconds: 1 }, { retry: { maxAttempts: 1 } });
        const started = performance.now();
        const error = await failure(client.stream(hello));
        assert.equal(error.kind, "timeout");
        assert.equal(error.message, "fake:model-a sent nothing for 1 s (BUB_MODEL_IDLE_TIMEOUT_SECONDS)");
        assert.ok(performance.now() - started < 3000);
      });

      it("times out a stream that goes silent after its first text, keeping what was streamed", async () => {
        behaviour = (response) => response.write(chunk({ role: "assistant", content: "partial " }));
        const client = clientFor({ api_base: `${raw.url}/v1`, model_idle_timeout_seconds: 1, fallback_models: ["fake:model-b"] });
        const events: ModelCallEvent[] = [];
        let caught: unknown = null;
        try {
          for await (const event of client.stream(hello)) events.push(event);
        } catch (error) {
          caught = error;
        }
        assert.deepEqual(events, [{ type: "text", delta: "partial " }]);
        assert.ok(BubError.isInstance(caught) && caught.kind === "timeout", String(caught));
      });

      it("counts any byte, SSE keep-alive comments included, as the server being alive", async () => {
        behaviour = (response) => {
          let pings = 0;
          const timer = setInterval(() => {
            if (++pings <= 5) return void response.write(": keep-alive\n\n");
            clearInterval(timer);
            response.end(`${chunk({ role: "assistant", content: "awake" })}${chunk({}, "stop")}data: [DONE]\n\n`);
          }, 300);
          response.on("close", () => clearInterval(timer));
        };
        const client = clientFor({ api_base: `${raw.url}/v1`, model_idle_timeout_seconds: 1 });
        const events = await collect(client.stream(hello));
        assert.deepEqual(events[0], { type: "text", delta: "awake" });
        assert.equal(events.at(-1)?.type, "finish");
      });
    });

    it("keeps the whole-call limit of model_timeout_seconds alongside it", async () => {
      server.script(reply.hang());
      const error = await failure(clientFor({ model_timeout_seconds: 0.2, model_idle_timeout_seconds: 5 }, { retry: { maxAttempts: 1 } }).stream(hello));
      assert.equal(error.message, "fake:model-a did not finish within 0.2 s (BUB_MODEL_TIMEOUT_SECONDS); the call was aborted.");
    });
  });

  describe("proxies", () => {
    let proxy: Awaited<ReturnType<typeof startProxy>>;
    before(async () => {
      proxy = await startProxy();
    });
    after(() => proxy.close());
    afterEach(() => {
      proxy.seen.length = 0;
    });

    const fakeHost = () => new URL(server.url).host;

    it("sends model requests through HTTP_PROXY / HTTPS_PROXY", async () => {
      server.script(reply.text("via the proxy"));
      const env = { HTTP_PROXY: proxy.url, HTTPS_PROXY: proxy.url, NO_PROXY: "" };
      const events = await collect(clientFor({}, { env }).stream(hello));
      assert.deepEqual(events[0], { type: "text", delta: "via " });
      assert.deepEqual(
        proxy.seen.map(({ method, target }) => `${method} ${target}`),
        [`CONNECT ${fakeHost()}`],
      );
      assert.equal(server.requests.length, 1);
    });

    it("reads the lower-case forms and sends credentials given in the proxy URL", async () => {
      server.script(reply.text("ok"));
      const withCredentials = proxy.url.replace("http://", "http://bub:s%40cret@");
      await collect(clientFor({}, { env: { http_proxy: withCredentials } }).stream(hello));
      assert.deepEqual(proxy.seen, [{ method: "CONNECT", target: fakeHost(), authorization: `Basic ${Buffer.from("bub:s@cret").toString("base64")}` }]);
    });

    it("goes direct for hosts in NO_PROXY", async () => {
      server.script(reply.text("ok"));
      await collect(clientFor({}, { env: { HTTP_PROXY: proxy.url, NO_PROXY: "localhost,127.0.0.1" } }).stream(hello));
      assert.deepEqual(proxy.seen, []);
      assert.equal(server.requests.length, 1);
    });

    it("keeps each client's dispatcher to itself: another client and the global fetch go direct", async () => {
      server.script(reply.text("one"), reply.text("two"));
      await collect(clientFor({}, { env: { HTTP_PROXY: proxy.url } }).stream(hello));
      await collect(clientFor({}, { env: {} }).stream(hello));
      const plain = await fetch(`${server.url}/models`);
      await plain.arrayBuffer();
      assert.equal(plain.status, 404);
      assert.equal(proxy.seen.length, 1, "only the first client's request went through the proxy");
    });

    it("gives up on a proxy that accepts the connection and never answers CONNECT after the idle timeout", async () => {
      const silent = await listen(createServer());
      silent.server.on("connect", () => undefined); // CONNECT requests are left hanging
      try {
        const started = performance.now();
        const error = await failure(clientFor({ model_idle_timeout_seconds: 1 }, { env: { HTTP_PROXY: silent.url }, retry: { maxAttempts: 1 } }).stream(hello));
        assert.equal(error.kind, "timeout");
        assert.ok(performance.now() - started < 3000);
      } finally {
        await silent.close();
      }
    });

    it("fails with a config error naming the variables when the proxy URL is not a URL", async () => {
      const error = await failure(clientFor({}, { env: { HTTPS_PROXY: "not a proxy" } }).stream(hello));
      assert.equal(error.kind, "config");
      assert.match(error.message, /^The proxy settings cannot be used \(.+\): check HTTPS_PROXY\.$/);
      assert.ok(!error.message.includes("not a proxy"), "the value, which may hold a password, is not repeated");
    });
  });

  describe("connect timeout", () => {
    /** A TCP server that accepts connections and never says anything (no TLS handshake). */
    let mute: Awaited<ReturnType<typeof listen<TcpServer>>>;
    before(async () => {
      mute = await listen(createTcpServer());
    });
    after(() => mute.close());

    it("is 30 s by default", () => {
      assert.equal(CONNECT_TIMEOUT_MS, 30_000);
    });

    it("bounds opening a connection, TLS handshake included, as a retryable network failure", async () => {
      const transport = await createModelTransport({ env: {}, idleTimeoutSeconds: 60, connectTimeoutMs: 300 });
      try {
        const started = performance.now();
        const error: unknown = await transport.fetch(`https://127.0.0.1:${mute.port}/v1/chat/completions`).then(
          () => assert.fail("the request succeeded"),
          (caught: unknown) => caught,
        );
        assert.equal(((error as Error).cause as { code?: string }).code, "UND_ERR_CONNECT_TIMEOUT");
        assert.ok(performance.now() - started < 2000);
        assert.equal(classifyModelError(error, "m:x").kind, "temporary");
      } finally {
        await transport.close();
      }
    });

    it("bounds the TLS handshake with the server inside a proxy tunnel", async () => {
      const proxy = await startProxy();
      const transport = await createModelTransport({ env: { HTTPS_PROXY: proxy.url }, idleTimeoutSeconds: 60, connectTimeoutMs: 300 });
      try {
        const error: unknown = await transport.fetch(`https://127.0.0.1:${mute.port}/v1/chat/completions`).then(
          () => assert.fail("the request succeeded"),
          (caught: unknown) => caught,
        );
        assert.deepEqual(
          proxy.seen.map(({ method, target }) => `${method} ${target}`),
          [`CONNECT 127.0.0.1:${mute.port}`],
        );
        assert.equal(((error as Error).cause as { code?: string }).code, "UND_ERR_CONNECT_TIMEOUT");
      } finally {
        await transport.close();
        await proxy.close();
      }
    });
  });

  it("opens new connections when a closed client is used again", async () => {
    server.script(reply.text("first"), reply.text("second"));
    const client = clientFor();
    assert.equal((await collect(client.stream(hello)))[0]?.type, "text");
    await client.close();
    const events = await collect(client.stream(hello));
    assert.deepEqual(events[0], { type: "text", delta: "second" });
  });
});
