import { afterEach, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, request as httpRequest } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { ChannelManager } from "../../src/channels/manager.ts";
import { ChannelMessage, mediaUrl, type MediaItem } from "../../src/channels/message.ts";
import { CLOSED_BY_DEFAULT, createTelegramChannel } from "../../src/channels/telegram/channel.ts";
import type { TelegramRetryOptions } from "../../src/channels/telegram/client.ts";
import { telegramSettings } from "../../src/channels/telegram/settings.ts";
import { isAddressed, mentionsWord } from "../../src/channels/telegram/parse.ts";
import { splitMessage } from "../../src/channels/telegram/split.ts";
import { fieldOf, type Prompt, type PromptPart } from "../../src/kernel/envelope.ts";
import type { BubFramework } from "../../src/kernel/framework.ts";
import type { BubPlugin } from "../../src/kernel/hooks.ts";
import { setLogSink, type LogLevel } from "../../src/kernel/log.ts";
import { FAKE_BOT, startFakeTelegram, type FakeDocument, type FakeTelegram } from "../support/fake-telegram.ts";
import { deferred, routerDispatch, testFramework, type Deferred } from "./support.ts";
import type { Message, User } from "grammy/types";

const TOKEN = "123:TEST";

/** A model that records prompts and answers `reply(prompt)`; `gate` holds the turn open. */
function recordingModel() {
  const prompts: Prompt[] = [];
  const called: Deferred<void>[] = [];
  let gate: Promise<void> | null = null;
  let reply = (prompt: Prompt) => `echo: ${typeof prompt === "string" ? JSON.parse(prompt).message : "parts"}`;
  const plugin: BubPlugin = {
    name: "model",
    loadState: async ({ message }) => {
      const lifespan = fieldOf(message, "lifespan") as ChannelMessage["lifespan"];
      if (lifespan) await lifespan.enter();
      return {};
    },
    saveState: async ({ message }) => {
      const lifespan = fieldOf(message, "lifespan") as ChannelMessage["lifespan"];
      if (lifespan) await lifespan.exit();
    },
    buildPrompt: async ({ message }) => {
      const text = String(fieldOf(message, "content"));
      const media = (fieldOf(message, "media") ?? []) as MediaItem[];
      const parts: PromptPart[] = [{ type: "text", text }];
      for (const item of media) {
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

let telegram: FakeTelegram;
let logs: { level: LogLevel; message: string }[];
let restoreLogs: () => void;

beforeEach(async () => {
  telegram = await startFakeTelegram({ token: TOKEN });
  logs = [];
  restoreLogs = setLogSink((level, _namespace, message, error) => logs.push({ level, message: error instanceof Error ? `${message}: ${error.message}` : message }));
});

let openGateway: (() => Promise<void>) | null = null;

afterEach(async () => {
  // A failed assertion must not leave a bot polling.
  await openGateway?.();
  openGateway = null;
  restoreLogs();
  await telegram.close();
});

/** Bounds that keep a failing test short (auto-retry's own 5xx backoff starts at 3 s). */
const TEST_RETRY: TelegramRetryOptions = { maxRetryAttempts: 3, maxDelaySeconds: 5, deadlineSeconds: 10 };

/** A running gateway (manager + Telegram channel) against the fake Bot API. */
async function gateway(env: Record<string, string>, model = recordingModel(), retry = TEST_RETRY) {
  let bub!: BubFramework;
  bub = testFramework([routerDispatch(() => bub), model.plugin], { BUB_TELEGRAM_TOKEN: TOKEN, BUB_TELEGRAM_API_ROOT: telegram.apiRoot, ...env });
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

function texts(method = "sendMessage"): string[] {
  return telegram.callsOf(method).map((call) => String(call.payload.text));
}

/** What Telegram accepted (failed tries left out). */
function delivered(method = "sendMessage"): string[] {
  return telegram.succeededOf(method).map((call) => String(call.payload.text));
}

/** Starting the channel alone (no gateway): resolves or rejects with what start() did. */
async function startAlone(env: Record<string, string>, retry = TEST_RETRY): Promise<void> {
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
async function startProxy() {
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
async function withEnv(vars: Record<string, string | undefined>, body: () => Promise<void>): Promise<void> {
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

const NO_PROXY_ENV = { HTTP_PROXY: undefined, http_proxy: undefined, HTTPS_PROXY: undefined, https_proxy: undefined, NO_PROXY: undefined, no_proxy: undefined };

describe("Telegram channel against the Bot API", () => {
  it("refuses to start without an allowlist, saying how to set one", async () => {
    let bub!: BubFramework;
    bub = testFramework([], { BUB_TELEGRAM_TOKEN: TOKEN, BUB_TELEGRAM_API_ROOT: telegram.apiRoot });
    bub.settings.register(telegramSettings);
    const manager = new ChannelManager(bub, { enabledChannels: ["telegram"], channels: (messageHandler) => [createTelegramChannel(bub, { messageHandler })] });
    await assert.rejects(manager.run(), (error: Error) => error.message === CLOSED_BY_DEFAULT);
    assert.match(CLOSED_BY_DEFAULT, /BUB_TELEGRAM_ALLOW_USERS/);
    assert.match(CLOSED_BY_DEFAULT, /BUB_TELEGRAM_ALLOW_ALL=true/);
    assert.equal(telegram.calls.length, 0, "nothing was sent to Telegram");
  });

  it("serves everyone only when BUB_TELEGRAM_ALLOW_ALL=true", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_ALL: "true" });
    telegram.sendText({ chatId: 5, userId: 5, text: "hi" });
    await telegram.waitForCalls("sendMessage", 1);
    assert.deepEqual(texts(), ["echo: hi"]);
    await bot.close();
  });

  it("answers an allowed user, showing typing while the turn runs", async () => {
    const model = recordingModel();
    const release = model.hold();
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7" }, model);
    const called = model.nextCall();
    telegram.sendText({ chatId: 7, userId: 7, text: "hello bot" });
    await called;
    const [typing] = await telegram.waitForCalls("sendChatAction", 1);
    assert.deepEqual(typing!.payload, { chat_id: "7", action: "typing" });
    assert.equal(telegram.callsOf("sendMessage").length, 0, "typing comes before the reply");
    release();
    await telegram.waitForCalls("sendMessage", 1);
    assert.deepEqual(texts(), ["echo: hello bot"]);
    const content = JSON.parse(String(model.prompts[0]));
    assert.equal(content.message, "hello bot");
    assert.equal(content.sender_id, "7");
    assert.equal(content.username, "user7");
    assert.equal(content.type, "text");
    await bot.close();
  });

  it("matches allowed usernames case-insensitively, with or without @", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "@Alice, 99" });
    telegram.sendText({ chatId: 8, userId: 8, username: "alice", text: "from alice" });
    await telegram.waitForCalls("sendMessage", 1);
    assert.deepEqual(texts(), ["echo: from alice"]);
    await bot.close();
  });

  it("tells a user who is not allowed 'Access denied.' in a private chat, once, and runs no turn", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7" });
    telegram.sendText({ chatId: 9, userId: 9, text: "let me in" });
    await telegram.waitForCalls("sendMessage", 1);
    // A later allowed message is the sync point: the refusal was the only thing sent.
    telegram.sendText({ chatId: 7, userId: 7, text: "hello" });
    await telegram.waitForCalls("sendMessage", 2);
    assert.deepEqual(texts(), ["Access denied.", "echo: hello"]);
    assert.equal(bot.model.prompts.length, 1);
    assert.ok(logs.some((line) => line.level === "info" && /telegram\.denied user_id=9 chat_id=9 .*refused/.test(line.message)));
    await bot.close();
  });

  it("ignores a stranger who addresses the bot in a group: nothing is posted, one info line says who and where", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7" });
    const mention = `@${FAKE_BOT.username} let me in`;
    const entities = [{ type: "mention", offset: 0, length: FAKE_BOT.username.length + 1 }];
    telegram.sendMessage({ chatId: -60, chatType: "supergroup", from: { id: 9, username: "mallory" }, fields: { text: mention, entities } });
    telegram.sendMessage({ chatId: -60, chatType: "supergroup", from: { id: 9, username: "mallory" }, fields: { text: "/start", entities: [{ type: "bot_command", offset: 0, length: 6 }] } });
    telegram.sendMessage({ chatId: -60, chatType: "supergroup", from: { id: 9, username: "mallory" }, fields: { text: "just chatting" } });
    telegram.sendMessage({ chatId: -60, chatType: "supergroup", from: { id: 7, username: "user7" }, fields: { text: `@${FAKE_BOT.username} hi`, entities } });
    await telegram.waitForCalls("sendMessage", 1);
    assert.deepEqual(texts(), [`echo: @${FAKE_BOT.username} hi`]);
    assert.equal(bot.model.prompts.length, 1);
    const denied = logs.filter((line) => line.message.startsWith("telegram.denied"));
    assert.deepEqual(denied.map((line) => line.level), ["info", "info", "debug"]);
    assert.match(denied[0]!.message, /user_id=9 chat_id=-60 chat_type=supergroup .*ignored/);
    await bot.close();
  });

  it("ignores chats outside the chat allowlist silently", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_CHATS: "100" });
    telegram.sendText({ chatId: 200, userId: 200, text: "outsider" });
    telegram.sendText({ chatId: 100, userId: 100, text: "insider" });
    await telegram.waitForCalls("sendMessage", 1);
    assert.deepEqual(texts(), ["echo: insider"]);
    assert.equal(bot.model.prompts.length, 1);
    await bot.close();
  });

  it("answers /start, refusing chats that are not allowed", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_CHATS: "1" });
    telegram.sendText({ chatId: 1, userId: 1, text: "/start" });
    telegram.sendText({ chatId: 2, userId: 2, text: "/start" });
    await telegram.waitForCalls("sendMessage", 2);
    assert.deepEqual(texts(), ["Bub is online. Send text to start.", "You are not allowed to chat with me. Please deploy your own instance of Bub."]);
    assert.equal(bot.model.prompts.length, 0);
    await bot.close();
  });

  it("in groups, starts turns only when addressed: /bub, @mention, reply, or the name as a word", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_CHATS: "-50" });
    const from = { id: 3, username: "carol" };
    const group = (text: string, fields: Record<string, unknown> = {}) => telegram.sendMessage({ chatId: -50, chatType: "supergroup", from, fields: { text, ...fields } });
    group("I like bubble tea");
    group("/bub what time is it", { entities: [{ type: "bot_command", offset: 0, length: 4 }] });
    await telegram.waitForCalls("sendMessage", 1);
    group(`@${FAKE_BOT.username} hi`, { entities: [{ type: "mention", offset: 0, length: FAKE_BOT.username.length + 1 }] });
    await telegram.waitForCalls("sendMessage", 2);
    group("thanks Bub!");
    await telegram.waitForCalls("sendMessage", 3);
    const prompts = bot.model.prompts.map((prompt) => JSON.parse(String(prompt)).message);
    assert.deepEqual(prompts, ["what time is it", `@${FAKE_BOT.username} hi`, "thanks Bub!"]);
    await bot.close();
  });

  it("hands a photo to the model as an image, and skips files over the size limit", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "4", BUB_TELEGRAM_MAX_FILE_BYTES: "1000" });
    const bytes = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]);
    telegram.addFile("small", bytes);
    telegram.addFile("huge", new Uint8Array(10), 5000);
    const photo = (fileId: string, size: number) => [{ file_id: `${fileId}-thumb`, file_unique_id: "t", width: 90, height: 90, file_size: 10 }, { file_id: fileId, file_unique_id: fileId, width: 800, height: 600, file_size: size }];
    telegram.sendMessage({ chatId: 4, from: { id: 4 }, fields: { photo: photo("small", bytes.byteLength), caption: "look" } });
    await telegram.waitForCalls("sendMessage", 1);
    telegram.sendMessage({ chatId: 4, from: { id: 4 }, fields: { photo: photo("huge", 5000) } });
    await telegram.waitForCalls("sendMessage", 2);
    const [withImage, tooBig] = bot.model.prompts as PromptPart[][];
    assert.ok(Array.isArray(withImage));
    assert.equal(JSON.parse(String(withImage![0]!.text)).message, "[Photo message] Caption: look");
    assert.deepEqual(withImage![1], { type: "image_url", image_url: { url: `data:image/jpeg;base64,${Buffer.from(bytes).toString("base64")}` } });
    assert.equal(typeof tooBig, "string", "an oversized photo reaches the model as text only");
    assert.equal(telegram.downloads, 1);
    await bot.close();
  });

  it("splits a long reply at paragraph boundaries, each part within the limit", async () => {
    const model = recordingModel();
    const paragraphs = Array.from({ length: 6 }, (_, index) => `Paragraph ${index}: ${"word ".repeat(200).trim()}.`);
    model.answerWith(() => paragraphs.join("\n\n"));
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7" }, model);
    telegram.sendText({ chatId: 7, userId: 7, text: "write a lot" });
    const calls = await telegram.waitForCalls("sendMessage", 2);
    const parts = calls.map((call) => String(call.payload.text));
    assert.ok(parts.every((part) => part.length <= 4096));
    assert.equal(parts.join("\n\n"), paragraphs.join("\n\n"));
    assert.ok(parts.every((part) => part.startsWith("Paragraph") && part.endsWith(".")));
    assert.equal(telegram.callsOf("sendDocument").length, 0, "a reply within BUB_TELEGRAM_MAX_MESSAGES is not attached");
    await bot.close();
  });

  it("sends a 2 MB reply as one preview message and answer.md instead of 513 messages", async () => {
    const model = recordingModel();
    const answer = Array.from({ length: 2 * 1024 }, (_, index) => `Line ${index}: ${"lorem ipsum ".repeat(84).trim()}`).join("\n");
    assert.ok(answer.length >= 2_000_000 && splitMessage(answer).length > 500);
    model.answerWith(() => answer);
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7" }, model);
    telegram.sendText({ chatId: 7, userId: 7, text: "write a book" });
    const [upload] = await telegram.waitForCalls("sendDocument", 1);
    const sent = texts();
    assert.equal(sent.length, 1);
    const preview = sent[0]!;
    assert.ok(preview.length <= 4096);
    const [head, note] = preview.split("\n\n… ");
    assert.ok(answer.startsWith(head!) && head!.length > 0 && head!.length <= 1000);
    assert.match(head!, /(lorem|ipsum)$/, "the preview ends at a word boundary");
    assert.equal(note, `The full answer (${answer.length.toLocaleString("en-US")} characters) is attached as answer.md.`);
    assert.equal(upload!.status, 200);
    assert.equal(String(upload!.payload.chat_id), "7");
    const document = upload!.payload.document as FakeDocument;
    assert.equal(document.filename, "answer.md");
    assert.equal(document.text, answer);
    assert.ok(logs.some((line) => line.level === "info" && /telegram\.send long reply session_id=telegram:7 chat_id=7 .*answer\.md/.test(line.message)));
    await bot.close();
  });

  it("attaches a reply only beyond BUB_TELEGRAM_MAX_MESSAGES messages", async () => {
    const model = recordingModel();
    const paragraph = (index: number) => `Part ${index}: ${"word ".repeat(700).trim()}.`;
    const replies = [2, 3].map((count) => Array.from({ length: count }, (_, index) => paragraph(index)).join("\n\n"));
    model.answerWith((prompt) => replies[Number(JSON.parse(String(prompt)).message)]!);
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7", BUB_TELEGRAM_MAX_MESSAGES: "2" }, model);
    telegram.sendText({ chatId: 7, userId: 7, text: "0" });
    await telegram.waitForCalls("sendMessage", 2);
    assert.deepEqual(texts(), [paragraph(0), paragraph(1)]);
    telegram.sendText({ chatId: 7, userId: 7, text: "1" });
    const [upload] = await telegram.waitForCalls("sendDocument", 1);
    assert.equal(telegram.callsOf("sendMessage").length, 3);
    assert.equal((upload!.payload.document as FakeDocument).text, replies[1]);
    await bot.close();
  });

  it("delivers a reply that got a 429 with retry_after once, exactly once", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7" });
    telegram.fail("sendMessage", { status: 429, retryAfter: 0 });
    telegram.sendText({ chatId: 7, userId: 7, text: "persist" });
    await telegram.waitForCalls("sendMessage", 2);
    await bot.manager.idle();
    assert.deepEqual(telegram.callsOf("sendMessage").map((call) => call.status), [429, 200]);
    assert.deepEqual(delivered(), ["echo: persist"]);
    assert.ok(logs.some((log) => log.level === "warn" && /telegram\.api sendMessage answered 429 Too Many Requests \(retry_after 0 s\)/.test(log.message)));
    assert.ok(!logs.some((log) => log.level === "error"), "nothing was undeliverable");
    await bot.close();
  });

  it("retries a reply after a 5xx answer (auto-retry waits 3 s first)", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7" });
    telegram.fail("sendMessage", { status: 502 });
    telegram.sendText({ chatId: 7, userId: 7, text: "again please" });
    await telegram.waitForCalls("sendMessage", 2);
    await bot.manager.idle();
    assert.deepEqual(telegram.callsOf("sendMessage").map((call) => call.status), [502, 200]);
    assert.deepEqual(delivered(), ["echo: again please"]);
    await bot.close();
  });

  it("does not wait out a retry_after above the limit: one line with the session, and it keeps serving", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7" });
    telegram.fail("sendMessage", { status: 429, retryAfter: 3600 });
    telegram.sendText({ chatId: 7, userId: 7, text: "doomed" });
    await telegram.waitForCalls("sendMessage", 1);
    await bot.manager.idle();
    const errors = logs.filter((log) => log.level === "error").map((log) => log.message);
    assert.deepEqual(errors, ["telegram.send undeliverable session_id=telegram:7 chat_id=7 part=1/1: sendMessage answered 429 Too Many Requests"]);
    telegram.sendText({ chatId: 7, userId: 7, text: "again" });
    await telegram.waitForCalls("sendMessage", 2);
    assert.deepEqual(delivered(), ["echo: again"]);
    await bot.close();
  });

  it("does not retry a 400, and logs Telegram's description", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7" });
    telegram.fail("sendMessage", { status: 400, description: "Bad Request: chat not found" });
    telegram.sendText({ chatId: 7, userId: 7, text: "where" });
    await telegram.waitForCalls("sendMessage", 1);
    await bot.manager.idle();
    assert.equal(telegram.callsOf("sendMessage").length, 1);
    assert.ok(logs.some((log) => log.level === "error" && log.message === "telegram.send undeliverable session_id=telegram:7 chat_id=7 part=1/1: sendMessage answered 400 Bad Request: chat not found"));
    await bot.close();
  });

  it("gives up on a reply whose connection keeps failing once the deadline passes", async () => {
    const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7" }, recordingModel(), { ...TEST_RETRY, deadlineSeconds: 0.5 });
    for (let index = 0; index < 5; index++) telegram.fail("sendMessage", { network: true });
    const started = Date.now();
    telegram.sendText({ chatId: 7, userId: 7, text: "unlucky" });
    await telegram.waitForCalls("sendMessage", 1);
    await bot.manager.idle();
    assert.ok(Date.now() - started < 3000, "the deadline cut auto-retry's 3 s backoff short");
    const error = logs.find((log) => log.level === "error");
    assert.match(error?.message ?? "", /^telegram\.send undeliverable session_id=telegram:7 chat_id=7 part=1\/1: Call to 'sendMessage' gave up after 0\.5 s of retries$/);
    assert.ok(logs.some((log) => log.level === "warn" && /telegram\.api sendMessage failed: Network request for 'sendMessage' failed!/.test(log.message)));
    assert.deepEqual(delivered(), []);
    await bot.close();
  });

  it("fails to start, within the deadline, when the Bot API cannot be reached", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await withEnv(NO_PROXY_ENV, async () => {
      await assert.rejects(startAlone({ BUB_TELEGRAM_API_ROOT: `http://127.0.0.1:${port}` }, { ...TEST_RETRY, deadlineSeconds: 0.5 }), (error: Error) => {
        assert.match(error.message, new RegExp(`^Could not reach the Telegram Bot API at http://127\\.0\\.0\\.1:${port} via direct \\(`));
        assert.doesNotMatch(error.message, /123:TEST/, "the token is not in the message");
        return true;
      });
    });
  });
});

describe("Telegram through a proxy", () => {
  it("sends getMe, sendMessage and file downloads through BUB_TELEGRAM_PROXY", async () => {
    const proxy = await startProxy();
    try {
      const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7", BUB_TELEGRAM_PROXY: proxy.url });
      const bytes = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 9]);
      telegram.addFile("pic", bytes);
      telegram.sendMessage({ chatId: 7, from: { id: 7 }, fields: { photo: [{ file_id: "pic", file_unique_id: "pic", width: 1, height: 1, file_size: bytes.byteLength }] } });
      await telegram.waitForCalls("sendMessage", 1);
      await bot.close();
      const { port } = new URL(telegram.apiRoot);
      assert.ok(proxy.tunnels.every((target) => target === `127.0.0.1:${port}`) && proxy.tunnels.length > 0);
      for (const line of [`POST /bot${TOKEN}/getMe`, `POST /bot${TOKEN}/getFile`, `GET /file/bot${TOKEN}/photos/pic.jpg`, `POST /bot${TOKEN}/sendMessage`]) {
        assert.ok(proxy.requests.includes(line), `${line} went through the proxy (saw ${proxy.requests.join(", ")})`);
      }
      assert.equal(telegram.downloads, 1);
      assert.ok(logs.some((log) => log.message.includes(`(api ${telegram.apiRoot}, proxy ${proxy.url})`)));
    } finally {
      await proxy.close();
    }
  });

  it("uses HTTP_PROXY from the environment, and NO_PROXY bypasses it", async () => {
    const proxy = await startProxy();
    try {
      await withEnv({ ...NO_PROXY_ENV, HTTP_PROXY: proxy.url }, async () => {
        const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7" });
        telegram.sendText({ chatId: 7, userId: 7, text: "via env" });
        await telegram.waitForCalls("sendMessage", 1);
        await bot.close();
      });
      assert.ok(proxy.requests.includes(`POST /bot${TOKEN}/sendMessage`));
      const seen = proxy.requests.length;
      await withEnv({ ...NO_PROXY_ENV, HTTP_PROXY: proxy.url, NO_PROXY: "127.0.0.1" }, async () => {
        const bot = await gateway({ BUB_TELEGRAM_ALLOW_USERS: "7" });
        telegram.sendText({ chatId: 7, userId: 7, text: "direct" });
        await telegram.waitForCalls("sendMessage", 2);
        await bot.close();
      });
      assert.equal(proxy.requests.length, seen, "nothing more went through the proxy");
      assert.deepEqual(delivered(), ["echo: via env", "echo: direct"]);
    } finally {
      await proxy.close();
    }
  });

  it("refuses a SOCKS proxy with a clear message, sending nothing", async () => {
    await withEnv(NO_PROXY_ENV, async () => {
      await assert.rejects(startAlone({ BUB_TELEGRAM_PROXY: "socks5://user:secret@127.0.0.1:1080" }), (error: Error) => {
        assert.match(error.message, /BUB_TELEGRAM_PROXY is a SOCKS proxy \(socks5:\/\/127\.0\.0\.1:1080\), and SOCKS proxies are not supported: use an HTTP proxy/);
        assert.doesNotMatch(error.message, /secret/);
        return true;
      });
      await withEnv({ HTTPS_PROXY: "socks5h://127.0.0.1:1080" }, async () => {
        await assert.rejects(startAlone({}), /HTTPS_PROXY is a SOCKS proxy/);
      });
    });
    assert.equal(telegram.calls.length, 0);
  });
});

describe("Telegram message rules", () => {
  const bot: User = { id: 1, is_bot: true, first_name: "Bub", username: "bub_bot" };
  const groupMessage = (fields: Partial<Message>): Message => ({ message_id: 1, date: 0, chat: { id: -1, type: "group", title: "g" }, from: { id: 2, is_bot: false, first_name: "A" }, ...fields }) as Message;

  it("matches the bot's name as a word only", () => {
    assert.equal(mentionsWord("hey bub, help", "bub"), true);
    assert.equal(mentionsWord("BUB?", "bub"), true);
    assert.equal(mentionsWord("bubble tea", "bub"), false);
    assert.equal(mentionsWord("hubbub", "bub"), false);
  });

  it("treats captionless media in a group as addressed only when replying to the bot", () => {
    const photo = [{ file_id: "f", file_unique_id: "u", width: 1, height: 1 }];
    assert.equal(isAddressed(groupMessage({ photo }), bot), false);
    assert.equal(isAddressed(groupMessage({ photo, reply_to_message: groupMessage({ from: bot }) as Message["reply_to_message"] }), bot), true);
  });

  it("reads mention entities with UTF-16 offsets", () => {
    const text = "😀 @bub_bot hi";
    assert.equal(isAddressed(groupMessage({ text, entities: [{ type: "mention", offset: 3, length: 8 }] }), bot), true);
  });
});

describe("splitMessage", () => {
  it("leaves short text alone", () => {
    assert.deepEqual(splitMessage("hi"), ["hi"]);
  });

  it("falls back to lines, then spaces, never cutting a word", () => {
    const lines = Array.from({ length: 3 }, (_, index) => `${index}`.repeat(30)).join("\n");
    assert.deepEqual(splitMessage(lines, 65), [`${"0".repeat(30)}\n${"1".repeat(30)}`, "2".repeat(30)]);
    const words = "alpha beta gamma delta";
    for (const part of splitMessage(words, 11)) assert.ok(words.split(" ").some((word) => part.includes(word)) && part.length <= 11);
    assert.deepEqual(splitMessage(words, 11), ["alpha beta", "gamma delta"]);
  });

  it("cuts a run without spaces hard, but never inside a surrogate pair", () => {
    const parts = splitMessage("😀".repeat(5), 5);
    assert.deepEqual(parts, ["😀😀", "😀😀", "😀"]);
  });
});
