/**
 * A real Telegram Bot API server on 127.0.0.1 for tests: enough of the API for grammY's
 * long polling and the calls the Telegram channel makes.
 *
 * Tests inject updates, read what the bot sent, serve files, and script failures:
 *
 * ```ts
 * const telegram = await startFakeTelegram();
 * // BUB_TELEGRAM_API_ROOT=telegram.apiRoot
 * telegram.sendText({ chatId: 1, userId: 1, text: "hello" });
 * const [reply] = await telegram.waitForCalls("sendMessage", 1);
 * telegram.fail("sendMessage", { status: 429, retryAfter: 0 }); // once, then it succeeds
 * telegram.fail("sendMessage", { status: 502 });
 * // a share of calls fails retryably at random (seeded: the same seed fails the same calls)
 * telegram.randomFaults({ methods: ["sendMessage"], rate: 0.1, seed: 1 });
 * // sendDocument uploads (multipart) are recorded with payload.document a FakeDocument
 * const [upload] = await telegram.waitForCalls("sendDocument", 1);
 * // inline keyboard buttons: press one as a user (a callback_query update)
 * telegram.pressButton({ message: sentMessageCall, data: "yes", from: { id: 7 } });
 * // once the bot called setWebhook, updates are POSTed to its URL (and resent until a 2xx)
 * await telegram.webhook.delivered(1);
 * await telegram.webhook.post("not json"); // one raw POST: resolves with the status
 * await telegram.close();
 * ```
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { RandomFaults, type RandomFaultsInit } from "./fake-telegram-faults.ts";
import { FakeWebhook } from "./fake-telegram-webhook.ts";
import { parseMultipart, type FakeDocument } from "./multipart.ts";
import type { FakeFailure, FakeMessageInit, FakeUser, RecordedCall } from "./fake-telegram-types.ts";

export type { FakeDocument } from "./multipart.ts";

export type { FakeFailure, FakeMessageInit, FakeUser, RecordedCall } from "./fake-telegram-types.ts";

interface Waiter {
  method: string;
  count: number;
  resolve: (calls: RecordedCall[]) => void;
}

interface Poll {
  offset: number;
  response: ServerResponse;
  timer: NodeJS.Timeout;
}

/** The bot the fake server impersonates. */
export const FAKE_BOT = { id: 4242, is_bot: true, first_name: "Bub", username: "bub_test_bot" } as const;

/** See the module comment. */
export interface FakeTelegram {
  /** Use as the channel's API root (`BUB_TELEGRAM_API_ROOT`). */
  readonly apiRoot: string;
  /** Every call except getUpdates, in order. */
  readonly calls: RecordedCall[];
  /**
   * Queues an update (assigning its update_id): a waiting getUpdates answers at once, or,
   * while a webhook is set, it is POSTed to the webhook.
   */
  pushUpdate(update: Record<string, unknown>): number;
  /** The webhook a `setWebhook` call registered, and the deliveries to it. */
  readonly webhook: FakeWebhook;
  /** Queues a message update and returns the message. */
  sendMessage(init: FakeMessageInit): Record<string, unknown>;
  /**
   * Queues a `callback_query` update: `from` pressed the inline button whose callback data is
   * `data` under the message a recorded `sendMessage` call sent (chat and message id from it).
   * Returns the callback query id (answerCallbackQuery calls carry it).
   */
  pressButton(init: { message: RecordedCall; data: string; from: FakeUser }): string;
  /** The callback data of every inline button a recorded sendMessage call carried, in order. */
  buttonsOf(call: RecordedCall): { text: string; data: string }[];
  /** Shortcut: a private text message from user `userId` (username `user<id>`). */
  sendText(init: { chatId: number; userId: number; text: string; username?: string }): Record<string, unknown>;
  /** Serves `bytes` under `fileId`; returns the file_path. */
  addFile(fileId: string, bytes: Uint8Array, fileSize?: number): string;
  /** The next call of `method` fails this way (queue several for several calls). */
  fail(method: string, failure: FakeFailure): void;
  /**
   * From now on, each call of these methods that no scripted failure answers fails with
   * probability `rate`, retryably: half of them `502 Bad Gateway`, half `429` with
   * `retry_after: retryAfter` (default 1 s). Draws come from a generator seeded with `seed`,
   * so the same calls in the same order fail the same way. `rate: 0` turns it off.
   */
  randomFaults(init: RandomFaultsInit): void;
  /** How many calls {@link randomFaults} failed, by status. */
  readonly injectedFaults: { 429: number; 502: number };
  /** Resolves with the calls of `method` once there are at least `count` of them. */
  waitForCalls(method: string, count: number): Promise<RecordedCall[]>;
  /** Calls of one method. */
  callsOf(method: string): RecordedCall[];
  /** Calls of one method that were answered with success (what Telegram delivered). */
  succeededOf(method: string): RecordedCall[];
  /** How many file downloads were served. */
  readonly downloads: number;
  /** How many getUpdates calls arrived. */
  readonly getUpdatesCount: number;
  /**
   * How many getUpdates calls arrived while another one was still waiting: two consumers of
   * one bot, which Telegram refuses (409 Conflict). Counted, and served as usual.
   */
  readonly overlappingPolls: number;
  close(): Promise<void>;
}

/** Starts a {@link FakeTelegram} on an ephemeral loopback port. */
export async function startFakeTelegram(options: { token?: string; webhookRetryMs?: number } = {}): Promise<FakeTelegram> {
  const token = options.token ?? "123:TEST";
  const webhook = new FakeWebhook(options.webhookRetryMs ?? 50);
  const calls: RecordedCall[] = [];
  const updates: Record<string, unknown>[] = [];
  const files = new Map<string, { path: string; bytes: Uint8Array; size: number }>();
  const failures = new Map<string, FakeFailure[]>();
  let waiters: Waiter[] = [];
  let polls: Poll[] = [];
  let nextUpdateId = 1;
  let nextMessageId = 1;
  let nextCallbackId = 1;
  /** The message id each successful sendMessage call got. */
  const sentIds = new WeakMap<Record<string, unknown>, number>();
  let downloads = 0;
  let random: RandomFaults | null = null;
  let getUpdatesCount = 0;
  let overlappingPolls = 0;

  const callsOf = (method: string) => calls.filter((call) => call.method === method);
  const notify = () => {
    waiters = waiters.filter((waiter) => {
      const matching = callsOf(waiter.method);
      if (matching.length < waiter.count) return true;
      waiter.resolve(matching);
      return false;
    });
  };

  // The recorded call each response answers, so its status can be filled in.
  const answered = new WeakMap<ServerResponse, RecordedCall>();
  const json = (response: ServerResponse, status: number, body: unknown) => {
    if (response.writableEnded || response.destroyed) return;
    const call = answered.get(response);
    if (call) call.status = status;
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(body));
  };
  const ok = (response: ServerResponse, result: unknown) => json(response, 200, { ok: true, result });

  const pending = (offset: number) => updates.filter((update) => (update.update_id as number) >= offset);
  const answerPolls = () => {
    polls = polls.filter((poll) => {
      const ready = pending(poll.offset);
      if (ready.length === 0) return true;
      clearTimeout(poll.timer);
      ok(poll.response, ready);
      return false;
    });
  };

  const sentMessage = (payload: Record<string, unknown>) => ({
    message_id: nextMessageId++,
    date: Math.floor(Date.now() / 1000),
    chat: { id: Number(payload.chat_id), type: "private" },
    from: FAKE_BOT,
    text: payload.text,
  });

  const handleMethod = (method: string, payload: Record<string, unknown>, response: ServerResponse) => {
    if (method !== "getUpdates") {
      const call: RecordedCall = { method, payload, status: 0 };
      answered.set(response, call);
      calls.push(call);
      notify();
    }
    const queued = failures.get(method) ?? [];
    const at = queued.findIndex((candidate) => candidate.chatId === undefined || String(candidate.chatId) === String(payload.chat_id));
    const failure = at >= 0 ? queued.splice(at, 1)[0] : random?.draw(method);
    if (failure) {
      if ("hang" in failure) return;
      if ("network" in failure) {
        const call = answered.get(response);
        if (call && failure.delivered) call.status = 200;
        response.socket?.destroy();
        return;
      }
      const body: Record<string, unknown> = { ok: false, error_code: failure.status, description: "description" in failure && failure.description ? failure.description : failure.status === 429 ? "Too Many Requests" : "Internal Server Error" };
      if ("retryAfter" in failure) body.parameters = { retry_after: failure.retryAfter };
      json(response, failure.status, body);
      return;
    }
    switch (method) {
      case "getMe":
        return ok(response, { ...FAKE_BOT, can_join_groups: true, can_read_all_group_messages: false, supports_inline_queries: false });
      case "deleteWebhook":
      case "setWebhook":
      case "getWebhookInfo": {
        const answer = webhook.answer(method, payload, updates);
        return json(response, answer.ok ? 200 : answer.error_code, answer);
      }
      case "setMyCommands":
      case "sendChatAction":
      case "close":
        return ok(response, true);
      case "getUpdates": {
        getUpdatesCount++;
        if (webhook.registration) return json(response, 409, { ok: false, error_code: 409, description: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first" });
        if (polls.some((poll) => !poll.response.writableEnded && !poll.response.destroyed)) overlappingPolls++;
        const offset = Number(payload.offset ?? 0);
        // Confirmed updates are forgotten, as Telegram does.
        for (let index = updates.length - 1; index >= 0; index--) if ((updates[index]!.update_id as number) < offset) updates.splice(index, 1);
        const ready = pending(offset);
        const timeout = Number(payload.timeout ?? 0);
        if (ready.length > 0 || timeout <= 0) return ok(response, ready);
        const poll: Poll = { offset, response, timer: setTimeout(() => {
          polls = polls.filter((other) => other !== poll);
          ok(response, []);
        }, timeout * 1000) };
        response.on("close", () => {
          clearTimeout(poll.timer);
          polls = polls.filter((other) => other !== poll);
        });
        polls.push(poll);
        return;
      }
      case "sendMessage": {
        const message = sentMessage(payload);
        sentIds.set(payload, message.message_id);
        return ok(response, message);
      }
      case "answerCallbackQuery":
        return ok(response, true);
      case "editMessageReplyMarkup":
        return ok(response, { ...sentMessage(payload), message_id: Number(payload.message_id) });
      case "sendDocument": {
        const document = payload.document as FakeDocument | undefined;
        if (!document || typeof document !== "object") return json(response, 400, { ok: false, error_code: 400, description: "Bad Request: there is no document in the request" });
        const { text: _text, ...message } = sentMessage(payload);
        return ok(response, { ...message, document: { file_id: `doc-${message.message_id}`, file_unique_id: `udoc-${message.message_id}`, file_name: document.filename, file_size: document.size } });
      }
      case "editMessageText":
        return ok(response, { ...sentMessage(payload), message_id: Number(payload.message_id) });
      case "getFile": {
        const file = files.get(String(payload.file_id));
        if (!file) return json(response, 400, { ok: false, error_code: 400, description: "Bad Request: invalid file_id" });
        return ok(response, { file_id: payload.file_id, file_unique_id: `u-${String(payload.file_id)}`, file_size: file.size, file_path: file.path });
      }
      default:
        return json(response, 404, { ok: false, error_code: 404, description: "Not Found: method not found" });
    }
  };

  const readBody = async (request: IncomingMessage): Promise<Record<string, unknown>> => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    if (!text) return {};
    const contentType = request.headers["content-type"] ?? "";
    const boundary = /^multipart\/form-data;\s*boundary=(.+)$/i.exec(contentType)?.[1];
    if (boundary) return parseMultipart(Buffer.concat(chunks), boundary.replace(/^"|"$/g, ""));
    if (contentType.includes("application/json")) return JSON.parse(text) as Record<string, unknown>;
    return Object.fromEntries(new URLSearchParams(text));
  };

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const fileMatch = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (fileMatch) {
      const file = [...files.values()].find((candidate) => candidate.path === fileMatch[2]);
      if (fileMatch[1] !== token || !file) {
        response.writeHead(404).end();
        return;
      }
      downloads++;
      response.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(file.bytes.byteLength) });
      response.end(Buffer.from(file.bytes));
      return;
    }
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    if (!match) {
      response.writeHead(404).end();
      return;
    }
    if (match[1] !== token) {
      json(response, 401, { ok: false, error_code: 401, description: "Unauthorized" });
      return;
    }
    readBody(request).then(
      (payload) => handleMethod(match[2]!, payload, response),
      () => json(response, 400, { ok: false, error_code: 400, description: "Bad Request: unreadable body" }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  const fake: FakeTelegram = {
    apiRoot: `http://127.0.0.1:${port}`,
    calls,
    get downloads() {
      return downloads;
    },
    get getUpdatesCount() {
      return getUpdatesCount;
    },
    get overlappingPolls() {
      return overlappingPolls;
    },
    webhook,
    pushUpdate(update) {
      const updateId = nextUpdateId++;
      if (webhook.registration) {
        webhook.push({ ...update, update_id: updateId });
        return updateId;
      }
      updates.push({ ...update, update_id: updateId });
      answerPolls();
      return updateId;
    },
    sendMessage({ chatId, chatType = "private", from, fields = {} }) {
      const sender = from ?? { id: chatId, is_bot: false, first_name: `User ${chatId}`, username: `user${chatId}` };
      const message = {
        message_id: nextMessageId++,
        date: Math.floor(Date.now() / 1000),
        chat: chatType === "private" ? { id: chatId, type: chatType, first_name: sender.first_name } : { id: chatId, type: chatType, title: "Group" },
        from: { is_bot: false, first_name: `User ${sender.id}`, ...sender },
        ...fields,
      };
      fake.pushUpdate({ message });
      return message;
    },
    pressButton({ message, data, from }) {
      const messageId = sentIds.get(message.payload);
      if (messageId === undefined) throw new Error("pressButton: that sendMessage call was not answered with a message");
      const chatId = Number(message.payload.chat_id);
      const id = String(nextCallbackId++);
      fake.pushUpdate({
        callback_query: {
          id,
          from: { is_bot: false, first_name: `User ${from.id}`, ...from },
          chat_instance: `instance-${chatId}`,
          data,
          message: { message_id: messageId, date: Math.floor(Date.now() / 1000), chat: { id: chatId, type: chatId > 0 ? "private" : "group" }, from: FAKE_BOT, text: message.payload.text },
        },
      });
      return id;
    },
    buttonsOf(call) {
      const markup = call.payload.reply_markup;
      const parsed = (typeof markup === "string" ? JSON.parse(markup) : markup) as { inline_keyboard?: { text: string; callback_data?: string }[][] } | undefined;
      return (parsed?.inline_keyboard ?? []).flat().map((button) => ({ text: button.text, data: button.callback_data ?? "" }));
    },
    sendText({ chatId, userId, text, username }) {
      const entities = text.startsWith("/") ? [{ type: "bot_command", offset: 0, length: text.split(/\s/)[0]!.length }] : undefined;
      return fake.sendMessage({ chatId, from: { id: userId, username: username ?? `user${userId}`, first_name: `User ${userId}` }, fields: entities ? { text, entities } : { text } });
    },
    addFile(fileId, bytes, fileSize) {
      const path = `photos/${fileId}.jpg`;
      files.set(fileId, { path, bytes, size: fileSize ?? bytes.byteLength });
      return path;
    },
    randomFaults(init) {
      random = init.rate > 0 ? new RandomFaults(init) : null;
    },
    get injectedFaults() {
      return { ...(random?.injected ?? { 429: 0, 502: 0 }) };
    },
    fail(method, failure) {
      const queue = failures.get(method) ?? [];
      queue.push(failure);
      failures.set(method, queue);
    },
    waitForCalls(method, count) {
      const matching = callsOf(method);
      if (matching.length >= count) return Promise.resolve(matching);
      return new Promise((resolve) => waiters.push({ method, count, resolve }));
    },
    callsOf,
    succeededOf: (method) => callsOf(method).filter((call) => call.status === 200),
    async close() {
      await webhook.close();
      for (const poll of polls) {
        clearTimeout(poll.timer);
        ok(poll.response, []);
      }
      polls = [];
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}

