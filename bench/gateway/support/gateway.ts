/**
 * What the whole-process gateway benches share (floor.ts, memory.ts, latency.ts, idle.ts):
 * one gateway process — the installed `bub gateway` or the floor gateway
 * (`../shared/bench/floor-gateway.mjs`) — started on its own fake Telegram Bot API
 * (test/support/fake-telegram.ts) and fake OpenAI-compatible model (test/support/fake-openai.ts)
 * on loopback, the same environment for both, and readers of its CPU time and memory from
 * `/proc/<pid>`.
 *
 * Environment of both gateways: `BUB_MODEL=local:any`, file tapes, `BUB_TELEGRAM_ALLOW_ALL=true`,
 * a temporary HOME and BUB_HOME, plus what the bench sets, plus every BUB_*, FLOOR_* and UV_*
 * variable of the bench process (e.g. `BUB_DEBOUNCE_SECONDS=0 node bench/gateway/floor.ts`;
 * `UV_USE_IO_URING=1` or `UV_THREADPOOL_SIZE=8` for libuv).
 *
 * Two variables help to look inside a gateway without tracing the bench itself:
 * `BENCH_NODE_OPTIONS` becomes the gateways' NODE_OPTIONS, and `BENCH_STDERR_DIR` keeps each
 * gateway's whole stderr in `<dir>/<label>-<pid>.stderr` and its stdout in `.stdout` (where
 * V8's `--trace-gc` goes). For example, to count the synchronous calls of a burst:
 * `BENCH_GATEWAYS=bub BENCH_NODE_OPTIONS=--trace-sync-io BENCH_STDERR_DIR=/tmp/trace node bench/gateway/floor.ts 80 5`.
 *
 * `BENCH_ANSWER_WORDS=200` makes every model answer 200 words longer, streamed word by word
 * (about 400 chunks), for both gateways: the streamed-answer workload.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, createWriteStream, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../../../test/support/fake-openai.ts";
import { startFakeTelegram, type FakeTelegram } from "../../../test/support/fake-telegram.ts";
import { installBub, tempDir, userEnv } from "../../support/processes.ts";

/** How long the fake model takes to answer, in ms. */
export const MODEL_MS = 20;
export const TOKEN = "123456:FLOOR-BENCH";
/** The first chat id of a workload; chat `FIRST_CHAT + i` is user `FIRST_CHAT + i`'s private chat. */
export const FIRST_CHAT = 100_000;
export const FLOOR_SCRIPT = fileURLToPath(new URL("../../../../shared/bench/floor-gateway.mjs", import.meta.url));
const LIBRARY_SCRIPT = fileURLToPath(new URL("./library-gateway.ts", import.meta.url));
const CLK_TCK = 100; // Linux USER_HZ

/** BUB_*, FLOOR_* and UV_* variables of this process go to both gateways (e.g. BUB_DEBOUNCE_SECONDS=0). */
export const passedThrough: Record<string, string> = Object.fromEntries(
  Object.entries(process.env).filter((entry): entry is [string, string] => /^(BUB|FLOOR|UV)_/.test(entry[0]) && entry[1] !== undefined),
);

/** `KEY=value ...` of {@link passedThrough}, or "" when none. */
export function passedThroughText(): string {
  return Object.entries(passedThrough).map(([key, value]) => `${key}=${value}`).join(" ");
}

/** A positive integer from `process.argv[index]`, at most `max`. */
export function intArg(index: number, fallback: number, max: number): number {
  const raw = process.argv[index];
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > max) throw new Error(`argument ${index - 1} must be an integer from 1 to ${max}, got ${raw}`);
  return value;
}

/** Which gateways to run, from `BENCH_GATEWAYS` (`bub`, `floor` or `bub,floor`), else `fallback`. */
export function gatewaysToRun(fallback: readonly GatewayLabel[]): GatewayLabel[] {
  const raw = process.env.BENCH_GATEWAYS;
  if (!raw) return [...fallback];
  const labels = raw.split(",").map((label) => label.trim());
  for (const label of labels) if (label !== "bub" && label !== "floor" && label !== "libs") throw new Error(`BENCH_GATEWAYS: expected bub, floor and/or libs, got ${label}`);
  return labels as GatewayLabel[];
}

/** utime + stime of a live process in ms. */
export function cpuMs(pid: number): number {
  const { user, system } = cpuSplitMs(pid);
  return user + system;
}

/** CPU time of a live process in ms, split into user (utime) and kernel (stime) time. */
export function cpuSplitMs(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // fields from #3 (state) on
  return { user: (Number(fields[11]) * 1000) / CLK_TCK, system: (Number(fields[12]) * 1000) / CLK_TCK }; // #14 utime, #15 stime
}

function statusKiB(pid: number, field: "VmHWM" | "VmRSS"): number {
  const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) : NaN;
}

/** Peak RSS (VmHWM) of a live process in KiB. */
export const peakKiB = (pid: number): number => statusKiB(pid, "VmHWM");
/** Current RSS (VmRSS) of a live process in KiB. */
export const rssKiB = (pid: number): number => statusKiB(pid, "VmRSS");
export const mib = (kib: number): string => (kib / 1024).toFixed(1);

export function tail(text: string, max = 4000): string {
  return text.length > max ? `...${text.slice(-max)}` : text;
}

/** `BENCH_ANSWER_WORDS=N`: every answer carries N more words, streamed a word or a space a chunk (200 words: about 400 chunks). */
const ANSWER_WORDS = Number(process.env.BENCH_ANSWER_WORDS ?? 0) || 0;
const ANSWER_TAIL = Array.from({ length: ANSWER_WORDS }, (_, index) => ` word${index % 10}`).join("");

/**
 * The fake model: answers after {@link MODEL_MS} with the last `q<chat>x<seq>` token of the
 * newest user message. `onRequest` is called with that token and the `performance.now()` at
 * which the request had been read (the turn's first model call has started). With
 * `BENCH_ANSWER_WORDS` the answer is that many words longer.
 */
export function scriptModel(openai: FakeOpenAI, count: number, onRequest?: (token: string | undefined, at: number) => void): void {
  for (let index = 0; index < count; index++)
    openai.script((request) => {
      const at = performance.now();
      const user = request.body.messages.filter((message) => message.role === "user").at(-1);
      const text = typeof user?.content === "string" ? user.content : JSON.stringify(user?.content ?? "");
      const token = text.match(/q\d+x\d+/g)?.at(-1);
      onRequest?.(token, at);
      return reply.text(`answer ${token ?? "none"}${ANSWER_TAIL} done`, { delayMs: MODEL_MS, usage: { prompt_tokens: 1000, completion_tokens: 4 + ANSWER_WORDS } });
    });
}

/** `libs`: the floor's work done with bub's libraries (./library-gateway.ts). */
export type GatewayLabel = "bub" | "floor" | "libs";

/**
 * The command line of a gateway: the installed bin (packed and installed once per bench
 * process), the floor script, or the library gateway, copied next to the installed package so
 * that its imports resolve to the libraries bub runs on.
 */
export async function gatewayCommand(label: GatewayLabel): Promise<[string, string[]]> {
  if (label === "floor") {
    if (!existsSync(FLOOR_SCRIPT)) throw new Error(`floor gateway not found at ${FLOOR_SCRIPT}`);
    return [process.execPath, [FLOOR_SCRIPT]];
  }
  installed ??= installBub();
  const { bin, prefix } = await installed;
  if (label === "bub") return [bin, ["gateway"]];
  const script = join(prefix, "bench-library-gateway.mts");
  copyFileSync(LIBRARY_SCRIPT, script);
  return [process.execPath, [script]];
}
let installed: ReturnType<typeof installBub> | undefined;

/** A gateway process running against its own fakes. */
export interface RunningGateway {
  readonly label: GatewayLabel;
  readonly child: ChildProcess;
  readonly pid: number;
  readonly telegram: FakeTelegram;
  readonly openai: FakeOpenAI;
  readonly home: string;
  /** Whether the process has exited. */
  exited(): boolean;
  /** The last lines of its stdout and stderr. */
  output(): string;
  /** Fails with its output when it has exited. */
  assertRunning(when: string): void;
  /** SIGTERM, SIGKILL after 15 s; resolves with the exit code. Then closes the fakes. */
  stop(): Promise<number | null>;
}

/** Options of {@link startGateway}. */
export interface StartOptions {
  /** How many model answers to script (one per message, plus some). */
  modelReplies: number;
  /** Added to the gateway's environment (before {@link passedThrough}). */
  env?: Record<string, string>;
  /** A Bot API several gateways share (bench/cluster); the caller closes it. Default: a fresh one. */
  telegram?: FakeTelegram;
  /** The working folder (several gateways sharing sessions need the same one). Default: its home. */
  cwd?: string;
  /** Passed to {@link scriptModel}. */
  onModelRequest?: (token: string | undefined, at: number) => void;
  /** Another installed `bub` to run instead of this checkout's (a build to compare with). */
  bin?: string;
}

/** Starts a gateway on fresh fakes and resolves once it polls Telegram. */
export async function startGateway(label: GatewayLabel, options: StartOptions): Promise<RunningGateway> {
  const [command, args] = options.bin ? [options.bin, ["gateway"]] : await gatewayCommand(label);
  const telegram = options.telegram ?? (await startFakeTelegram({ token: TOKEN }));
  const openai = await startFakeOpenAI();
  scriptModel(openai, options.modelReplies, options.onModelRequest);
  const home = tempDir(label);
  const env = userEnv(home, {
    BUB_HOME: join(home, ".bub"),
    BUB_MODEL: "local:any",
    BUB_API_BASE: openai.url,
    BUB_API_KEY: "x",
    BUB_TAPE_STORE: "file",
    BUB_TELEGRAM_TOKEN: TOKEN,
    BUB_TELEGRAM_API_ROOT: telegram.apiRoot,
    BUB_TELEGRAM_ALLOW_ALL: "true",
    ...options.env,
    ...passedThrough,
    ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}),
  });
  const child = spawn(command, args, { cwd: options.cwd ?? home, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  const stderrDir = process.env.BENCH_STDERR_DIR;
  if (stderrDir) {
    mkdirSync(stderrDir, { recursive: true });
    child.stderr!.pipe(createWriteStream(join(stderrDir, `${label}-${child.pid}.stderr`)));
    child.stdout!.pipe(createWriteStream(join(stderrDir, `${label}-${child.pid}.stdout`)));
  }
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout = tail(stdout + chunk, 8000)));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr = tail(stderr + chunk, 8000)));
  let exited = false;
  const closed = new Promise<number | null>((resolve) => child.once("close", (code) => ((exited = true), resolve(code))));
  const output = () => `${tail(stdout)}\n${tail(stderr)}`;
  const gateway: RunningGateway = {
    label,
    child,
    pid: child.pid!,
    telegram,
    openai,
    home,
    exited: () => exited,
    output,
    assertRunning(when) {
      if (exited) throw new Error(`${label} exited ${when}:\n${output()}`);
    },
    async stop() {
      if (!exited) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      const code = await closed;
      clearTimeout(timer);
      if (!options.telegram) await telegram.close();
      await openai.close();
      return code;
    },
  };
  try {
    // Ready once it has polled (bub calls deleteWebhook, then getMe, first; the floor polls at once).
    for (let waited = 0; waited < 30_000 && label === "bub"; waited += 20) {
      gateway.assertRunning("before polling");
      if (telegram.calls.some((call) => call.method === "deleteWebhook" || call.method === "getMe")) break;
      await sleep(20);
    }
    await sleep(500); // the first getUpdates is waiting
    gateway.assertRunning("before polling");
  } catch (error) {
    if (!exited) child.kill("SIGKILL");
    await gateway.stop();
    throw error;
  }
  return gateway;
}

/**
 * Calls `onSent(call, at)` with the `performance.now()` at which each sendMessage reached
 * the fake Bot API, as it arrives (the fake keeps `calls` as one array and pushes to it as
 * each request is read; this wraps that push, so nothing is polled).
 */
export function onSendMessage(telegram: FakeTelegram, onSent: (payload: Record<string, unknown>, at: number) => void): void {
  const calls = telegram.calls;
  const push = calls.push.bind(calls);
  calls.push = (...items) => {
    const at = performance.now();
    for (const call of items) if (call.method === "sendMessage") onSent(call.payload, at);
    return push(...items);
  };
}

/** The `q<chat>x<seq>` token an answer names, or undefined. */
export function answerToken(payload: Record<string, unknown>): { key: string; chat: number; seq: number } | undefined {
  const match = /q(\d+)x(\d+)/.exec(String(payload.text ?? ""));
  return match ? { key: match[0], chat: Number(match[1]), seq: Number(match[2]) } : undefined;
}

/** Pushes a private text message carrying `q<chat>x<seq>` from the chat's user. */
export function sendToken(telegram: FakeTelegram, chat: number, seq: number): void {
  telegram.sendText({ chatId: chat, userId: chat, text: `hello, this is message q${chat}x${seq} of the benchmark` });
}

/**
 * Warms a gateway up: one message from each of `chats` chats below {@link FIRST_CHAT} (bub
 * loads its agent on the first message), resolving once all are answered (30 s at most).
 */
export async function warmUp(gateway: RunningGateway, chats: number): Promise<void> {
  const before = gateway.telegram.callsOf("sendMessage").length;
  for (let index = 1; index <= chats; index++) sendToken(gateway.telegram, FIRST_CHAT - index, 1);
  const answered = gateway.telegram.waitForCalls("sendMessage", before + chats);
  const timeout = sleep(30_000).then(() => {
    throw new Error(`${gateway.label}: the ${chats} warm-up messages were not answered within 30 s:\n${gateway.output()}`);
  });
  await Promise.race([answered, timeout]);
}
