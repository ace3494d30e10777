/** Shared setup of the Telegram channel tests: the fake Bot API, a recording model, a gateway, a proxy. */
import { afterEach, beforeEach } from "node:test";
import { createServer, request as httpRequest } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { ChannelManager } from "../../src/channels/manager.ts";
import { mediaUrl } from "../../src/channels/message.ts";
import { createTelegramChannel } from "../../src/channels/telegram/channel.ts";
import type { TelegramRetryOptions } from "../../src/channels/telegram/client.ts";
import { telegramSettings } from "../../src/channels/telegram/settings.ts";
import type { Prompt, PromptPart } from "../../src/kernel/envelope.ts";
import type { BubFramework } from "../../src/kernel/framework.ts";
import type { BubPlugin } from "../../src/kernel/hooks.ts";
import { setLogSink, type LogLevel } from "../../src/kernel/log.ts";
import { startFakeTelegram, type FakeTelegram } from "../support/fake-telegram.ts";
import { deferred, testFramework, type Deferred } from "./support.ts";

export const TOKEN = "123:TEST";

/** A model that records prompts and answers `reply(prompt)`; `gate` holds the turn open. */
export function recordingModel() {
  const prompts: Prompt[] = [];
  const called: Deferred<void>[] = [];
  let gate: Promise<void> | null = null;
  let reply = (prompt: Prompt) => `echo: ${typeof prompt === "string" ? JSON.parse(prompt).message : "parts"}`;
  const plugin: BubPlugin = {
    name: "model",
    loadState: async ({ message }) => {
      if (message.lifespan) await message.lifespan.enter();
      return {};
    },
    saveState: async ({ message }) => {
      if (message.lifespan) await message.lifespan.exit();
    },
    buildPrompt: async ({ message }) => {
      const text = message.content;
      const parts: PromptPart[] = [{ type: "text", text }];
      for (const item of message.media) {
        const url = await mediaUrl(item);
        if (url && item.type === "image") parts.push({ type: "image_url", image_url: { url } });
      }
      return parts.length > 1 ? parts : text;
    },
    runModel: async ({ prompt }) => {
      prompts.push(prompt);
      called.shift()?.resolve();
      if (gate) await gate;
      return reply(prompt);
    },
  };
  return {
    plugin,
    prompts,
    nextCall() {
      const waiter = deferred();
      called.push(waiter);
      return waiter.promise;
    },
    hold(): () => void {
      const open = deferred();
      gate = open.promise;
      return () => {
        gate = null;
        open.resolve();
      };
    },
    answerWith(next: (prompt: Prompt) => string) {
      reply = next;
    },
  };
}

export let telegram: FakeTelegram;
export let logs: { level: LogLevel; message: string }[];
let restoreLogs: () => void;
let openGateway: (() => Promise<void>) | null = null;

/** Registers the hooks every Telegram test file needs: a fresh fake Bot API and log capture per test, and no bot left polling after one. */
export function useFakeTelegram(): void {
  beforeEach(async () => {
    telegram = await startFakeTelegram({ token: TOKEN });
    logs = [];
    restoreLogs = setLogSink((level, _namespace, message, error) => logs.push({ level, message: error instanceof Error ? `${message}: ${error.message}` : message }));
  });

  afterEach(async () => {
    // A failed assertion must not leave a bot polling.
    await openGateway?.();
    openGateway = null;
    restoreLogs();
    await telegram.close();
  });
}

/** Bounds that keep a failing test short (auto-retry's own 5xx backoff starts at 3 s). */
export const TEST_RETRY: TelegramRetryOptions = { maxRetryAttempts: 3, maxDelaySeconds: 5, deadlineSeconds: 10 };

/** A running gateway (manager + Telegram channel) against the fake Bot API. */
export async function gateway(env: Record<string, string>, model = recordingModel(), retry = TEST_RETRY) {
  let bub!: BubFramework;
  bub = testFramework([model.plugin], { BUB_TELEGRAM_TOKEN: TOKEN, BUB_TELEGRAM_API_ROOT: telegram.apiRoot, ...env });
  bub.settings.register(telegramSettings);
  const manager = new ChannelManager(bub, {
    enabledChannels: ["telegram"],
    channels: (messageHandler) => [createTelegramChannel(bub, { messageHandler, retry })],
    debounce: { debounceSeconds: 0, maxWaitSeconds: 0 },
    graceSeconds: 5,
  });
  const stop = new AbortController();
  const done = manager.run(stop.signal);
  await manager.ready();
  const close = async () => {
    stop.abort();
    await done;
  };
  openGateway = close;
  return { model, manager, close };
}

export function texts(method = "sendMessage"): string[] {
  return telegram.callsOf(method).map((call) => String(call.payload.text));
}

/** What Telegram accepted (failed tries left out). */
export function delivered(method = "sendMessage"): string[] {
  return telegram.succeededOf(method).map((call) => String(call.payload.text));
}

/** Starting the channel alone (no gateway): resolves or rejects with what start() did. */
export async function startAlone(env: Record<string, string>, retry = TEST_RETRY): Promise<void> {
  let bub!: BubFramework;
  bub = testFramework([], { BUB_TELEGRAM_TOKEN: TOKEN, BUB_TELEGRAM_API_ROOT: telegram.apiRoot, BUB_TELEGRAM_ALLOW_ALL: "true", ...env });
  bub.settings.register(telegramSettings);
  const manager = new ChannelManager(bub, { enabledChannels: ["telegram"], channels: (messageHandler) => [createTelegramChannel(bub, { messageHandler, retry })] });
  const stop = new AbortController();
  const done = manager.run(stop.signal);
  const ready = manager.ready().then(() => {
    stop.abort();
  });
  await Promise.all([done, ready]);
}

/**
 * An HTTP proxy on 127.0.0.1 that serves CONNECT tunnels (what undici's ProxyAgent uses)
 * and absolute-URI forwarding, only to loopback targets. `requests` lists the request
 * lines that went through it (`POST /bot<token>/getMe`).
 */
export async function startProxy() {
  const requests: string[] = [];
  const tunnels: string[] = [];
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  };
  const server = createServer((request, response) => {
    const target = new URL(request.url ?? "/");
    if (target.hostname !== "127.0.0.1") return void response.writeHead(403).end();
    requests.push(`${request.method} ${target.pathname}`);
    const upstream = httpRequest(target, { method: request.method, headers: request.headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    upstream.on("error", () => response.destroy());
    request.pipe(upstream);
  });
  server.on("connection", track);
  server.on("connect", (request, client: Socket, head: Buffer) => {
    const [host, port] = String(request.url).split(":");
    if (host !== "127.0.0.1") return void client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
    tunnels.push(String(request.url));
    const upstream = connect(Number(port), host, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      // The target is plain HTTP, so the tunnelled request lines can be read.
      const sniff = (chunk: Buffer) => {
        for (const match of chunk.toString("latin1").matchAll(/^(GET|POST) (\S+) HTTP\/1\.1\r$/gm)) requests.push(`${match[1]} ${match[2]}`);
      };
      if (head.length > 0) {
        sniff(head);
        upstream.write(head);
      }
      client.on("data", sniff);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    track(upstream);
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    tunnels,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Runs `body` with proxy environment variables set, restoring them afterwards. */
export async function withEnv(vars: Record<string, string | undefined>, body: () => Promise<void>): Promise<void> {
  const saved = Object.fromEntries(Object.keys(vars).map((name) => [name, process.env[name]]));
  const set = (values: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
  set(vars);
  try {
    await body();
  } finally {
    set(saved);
  }
}

export const NO_PROXY_ENV = { HTTP_PROXY: undefined, http_proxy: undefined, HTTPS_PROXY: undefined, https_proxy: undefined, NO_PROXY: undefined, no_proxy: undefined };
