// The floor gateway's work (../../../../shared/bench/floor-gateway.mjs) done with the libraries
// bub is built on, and nothing of bub's: what a correct gateway costs when its Bot API calls go
// through grammY (with @grammyjs/auto-retry), its model call through the AI SDK's
// OpenAI-compatible provider (`doStream`, the call bub makes, its stream parts read to the
// end), both over undici's `request` with the very `fetch` bub gives them (the installed
// package's http/request-fetch.js, the one module of bub's it takes). So `bub / libs` is what
// the rest of bub's code costs, and `libs / floor` what the libraries cost over plain Node.
// Run by floor.ts with BENCH_LIBRARY_FLOOR=1.
//
// Same behaviour as the floor: long polling (the next offset acknowledges a batch); one turn
// per text message, one at a time per chat, chats in parallel, at most 256 turns in flight
// (FLOOR_CONCURRENCY, as the floor's); a
// system prompt of FLOOR_SYSTEM_BYTES (3,600) and the chat's earlier messages from memory; the
// user message framed as bub frames it; the user message and the answer appended as two JSON
// lines to the chat's JSONL file, group-committed every 5 ms (one write and one fdatasync per
// file per batch) before the reply is sent.
//
// The bench copies this file next to the installed package (its `node_modules` then resolve
// the imports to the very versions bub runs on) and starts it with the gateways' environment.
import { open, mkdir, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { Bot } from "grammy";
import { autoRetry } from "@grammyjs/auto-retry";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { Agent } from "undici";
import type { LanguageModelV4Message } from "@ai-sdk/provider";

const env = process.env;
const token = env.BUB_TELEGRAM_TOKEN ?? "";
const apiRoot = (env.BUB_TELEGRAM_API_ROOT ?? "https://api.telegram.org").replace(/\/+$/, "");
const baseURL = (env.BUB_API_BASE ?? "").replace(/\/+$/, "");
const modelId = (env.BUB_MODEL ?? "fake-model").replace(/^[^:]*:/, "");
const dataDir = join(env.BUB_HOME ?? ".", "library-tapes");
const MAX_TURNS = Number(env.FLOOR_CONCURRENCY || 256);
const BATCH_MS = 5;
const systemBytes = Number(env.FLOOR_SYSTEM_BYTES || 3600);
const sentence = "You are a helpful agent that lives in people's chats; answer briefly, use tools when they help, and keep to the facts. ";
const systemPrompt = sentence.repeat(Math.ceil(systemBytes / sentence.length)).slice(0, systemBytes);

// ---- the fetch bub gives the AI SDK and grammY, from the installed package (this file runs next to it) ----
const { requestFetch } = (await import(new URL("./node_modules/bub-ts/dist/http/request-fetch.js", import.meta.url).href)) as typeof import("../../../src/http/request-fetch.ts");
const fetchOverRequest = requestFetch(new Agent({ keepAliveTimeout: 30_000 }));

const bot = new Bot(token, { client: { apiRoot, fetch: fetchOverRequest } });
bot.api.config.use(autoRetry());
const model = createOpenAICompatible({ name: "local", baseURL, apiKey: env.BUB_API_KEY ?? "", includeUsage: true, fetch: fetchOverRequest }).chatModel(modelId);

// ---- tape files: group commit every 5 ms, one write + one fdatasync per touched file ----
interface TapeFile {
  handle: FileHandle;
  pending: string;
  waiters: { resolve: () => void; reject: (error: unknown) => void }[];
  busy: boolean;
}
const dirty = new Set<TapeFile>();
let flushTimer: NodeJS.Timeout | null = null;

function append(file: TapeFile, text: string): Promise<void> {
  const { promise, resolve, reject } = Promise.withResolvers<void>();
  file.pending += text;
  file.waiters.push({ resolve, reject });
  dirty.add(file);
  flushTimer ??= setTimeout(flushBatch, BATCH_MS);
  return promise;
}
function flushBatch(): void {
  flushTimer = null;
  for (const file of dirty) {
    if (file.busy) continue;
    dirty.delete(file);
    void flushFile(file);
  }
  if (dirty.size > 0) flushTimer ??= setTimeout(flushBatch, BATCH_MS);
}
async function flushFile(file: TapeFile): Promise<void> {
  file.busy = true;
  const { pending, waiters } = file;
  file.pending = "";
  file.waiters = [];
  try {
    await file.handle.write(pending);
    await file.handle.datasync();
    for (const waiter of waiters) waiter.resolve();
  } catch (error) {
    for (const waiter of waiters) waiter.reject(error);
  } finally {
    file.busy = false;
    if (file.pending) {
      dirty.add(file);
      flushTimer ??= setTimeout(flushBatch, BATCH_MS);
    }
  }
}

// ---- chats: per-chat queue, at most MAX_TURNS turns in flight ----
interface IncomingMessage {
  text: string;
  message_id: number;
  date: number;
  from?: { id: number; is_bot: boolean; first_name: string; last_name?: string; username?: string };
}
interface Chat {
  id: string;
  queue: IncomingMessage[];
  running: boolean;
  history: LanguageModelV4Message[];
  file: TapeFile | null;
}
const chats = new Map<string, Chat>();
const ready: Chat[] = [];
let inFlight = 0;

function enqueue(chatId: string, message: IncomingMessage): void {
  let chat = chats.get(chatId);
  if (!chat) chats.set(chatId, (chat = { id: chatId, queue: [], running: false, history: [], file: null }));
  chat.queue.push(message);
  if (chat.running) return;
  chat.running = true;
  admit(chat);
}
function admit(chat: Chat): void {
  if (inFlight < MAX_TURNS) {
    inFlight++;
    void runTurn(chat);
  } else ready.push(chat);
}
function turnEnded(chat: Chat): void {
  inFlight--;
  if (chat.queue.length > 0) ready.push(chat);
  else chat.running = false;
  while (inFlight < MAX_TURNS && ready.length > 0) {
    inFlight++;
    void runTurn(ready.shift()!);
  }
}

function frame(chat: Chat, message: IncomingMessage): string {
  const from = message.from;
  return `channel=$telegram|chat_id=${chat.id}\n---Date: ${new Date().toISOString()}---\n${JSON.stringify({
    message: message.text,
    message_id: message.message_id,
    type: "text",
    username: from?.username ?? "",
    full_name: [from?.first_name, from?.last_name].filter(Boolean).join(" "),
    sender_id: String(from?.id ?? ""),
    sender_is_bot: from?.is_bot ?? false,
    date: message.date,
  })}`;
}

async function callModel(prompt: LanguageModelV4Message[]): Promise<string> {
  const { stream } = await model.doStream({ prompt });
  let answer = "";
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return answer;
    if (value.type === "text-delta") answer += value.delta;
    else if (value.type === "error") throw new Error(`model error: ${String(value.error)}`);
  }
}

async function runTurn(chat: Chat): Promise<void> {
  const message = chat.queue.shift()!;
  try {
    if (!chat.file) {
      const handle = await open(join(dataDir, `telegram_${chat.id.replace(/[^0-9A-Za-z_-]/g, "_")}.jsonl`), "a");
      chat.file = { handle, pending: "", waiters: [], busy: false };
    }
    const text = frame(chat, message);
    const user: LanguageModelV4Message = { role: "user", content: [{ type: "text", text }] };
    const answer = await callModel([{ role: "system", content: systemPrompt }, ...chat.history, user]);
    const date = new Date().toISOString();
    await append(chat.file, `${JSON.stringify({ role: "user", content: text, date })}\n${JSON.stringify({ role: "assistant", content: answer, date })}\n`);
    chat.history.push(user, { role: "assistant", content: [{ type: "text", text: answer }] });
    for (let at = 0; at < answer.length || at === 0; at += 4096) await bot.api.sendMessage(chat.id, answer.slice(at, at + 4096) || "(empty answer)");
  } catch (error) {
    console.error(`library gateway: turn failed chat=${chat.id} message=${message.message_id}: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    turnEnded(chat);
  }
}

// ---- the poller ----
let stopping = false;
async function poll(): Promise<void> {
  let offset = 0;
  while (!stopping) {
    let updates;
    try {
      updates = await bot.api.getUpdates({ offset, limit: 100, timeout: 30 });
    } catch (error) {
      if (stopping) break;
      console.error(`library gateway: getUpdates failed: ${error instanceof Error ? error.message : String(error)}`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      continue;
    }
    for (const update of updates) {
      if (update.update_id < offset) continue;
      offset = update.update_id + 1;
      const message = update.message;
      if (message?.text !== undefined) enqueue(String(message.chat.id), { text: message.text, message_id: message.message_id, date: message.date, from: message.from });
    }
  }
}

function stop(): void {
  if (stopping) process.exit(0);
  stopping = true;
  const wait = () => (inFlight === 0 && dirty.size === 0 && !flushTimer ? process.exit(0) : setTimeout(wait, 20));
  wait();
  setTimeout(() => process.exit(0), 5000).unref();
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
await mkdir(dataDir, { recursive: true });
console.error(`library gateway: polling ${apiRoot}, model ${baseURL} (${modelId}), tapes in ${dataDir}`);
void poll();
