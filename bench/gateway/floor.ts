// The installed `bub gateway` against the floor of a Telegram agent gateway
// (../shared/bench/floor-gateway.mjs: "the least a correct gateway does per message"), run the
// same way, on the same fakes, in the same invocation, loopback only.
//
// Both gateways serve a fake Telegram Bot API (test/support/fake-telegram.ts) with a fake
// OpenAI-compatible server (test/support/fake-openai.ts) answering every streaming request
// after 20 ms. `bub` is the package packed and installed the way users get it
// (`packAndInstall`), builtin agent, file tapes (`BUB_TAPE_STORE=file`), model `local:any`,
// `BUB_TELEGRAM_ALLOW_ALL=true`, everything else at its default (debounce 1 s, concurrent
// admission). The floor gets the same environment variables. BUB_* and FLOOR_* variables set
// when running this bench are passed to both (e.g. `BUB_DEBOUNCE_SECONDS=0 node ...`).
//
// Workload: N private chats x M messages, each chat a user who sends the next message once
// the previous one is answered (closed loop; the chats run in parallel). Each message carries
// a token `q<chat>x<seq>`, the fake model echoes the last one it finds in the newest user
// message, so every sendMessage names the message it answers: answered / lost (no answer by
// the deadline) / duplicated (answered twice) / order kept (answers of a chat arrive in the
// order of its messages).
//
// Measured per gateway, from the first message pushed to the last answer (+250 ms for the
// tape writes): CPU time (utime + stime from /proc/<pid>/stat) per message answered; peak
// RSS (VmHWM from /proc/<pid>/status, read just before SIGTERM, so it includes start-up).
//
// Run: node bench/gateway/floor.ts [chats=1000] [messages=5]      e.g. node bench/gateway/floor.ts 200 5
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../../test/support/fake-openai.ts";
import { startFakeTelegram, type FakeTelegram } from "../../test/support/fake-telegram.ts";
import { installBub, printMachine, tempDir, userEnv } from "../support/processes.ts";

const CHATS = intArg(2, 1000, 10_000);
const MESSAGES = intArg(3, 5, 100);
const MODEL_MS = 20;
const TOKEN = "123456:FLOOR-BENCH";
const FIRST_CHAT = 100_000;
const FLOOR_SCRIPT = fileURLToPath(new URL("../../../shared/bench/floor-gateway.mjs", import.meta.url));
const CLK_TCK = 100; // Linux USER_HZ
/** BUB_* and FLOOR_* variables of this process go to both gateways (e.g. BUB_DEBOUNCE_SECONDS=0). */
const passedThrough = Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => /^(BUB|FLOOR)_/.test(entry[0]) && entry[1] !== undefined));
// Goals (from the issue): CPU per message <= 4x the floor's, peak RSS <= 2x, 0 lost, 0 duplicated, order kept.
const CPU_GOAL = 4;
const RSS_GOAL = 2;

function intArg(index: number, fallback: number, max: number): number {
  const raw = process.argv[index];
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > max) throw new Error(`argument ${index - 1} must be an integer from 1 to ${max}, got ${raw}`);
  return value;
}

/** utime + stime of a live process in ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // fields from #3 (state) on
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK; // #14 utime, #15 stime
}

/** Peak RSS (VmHWM) of a live process in KiB. */
function peakKiB(pid: number): number {
  const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) : NaN;
}

interface Result {
  label: string;
  sent: number;
  answered: number;
  lost: number;
  duplicated: number;
  outOfOrder: number;
  otherMessages: number;
  cpuMs: number;
  cpuPerMessageMs: number;
  peakKiB: number;
  wallMs: number;
  modelRequests: number;
  exitCode: number | null;
}

/** The fake model: answers after 20 ms with the token of the newest user message. */
function scriptModel(openai: FakeOpenAI, count: number): void {
  for (let index = 0; index < count; index++)
    openai.script((request) => {
      const user = request.body.messages.filter((message) => message.role === "user").at(-1);
      const text = typeof user?.content === "string" ? user.content : JSON.stringify(user?.content ?? "");
      const tokens = text.match(/q\d+x\d+/g);
      return reply.text(`answer ${tokens?.at(-1) ?? "none"} done`, { delayMs: MODEL_MS, usage: { prompt_tokens: 1000, completion_tokens: 4 } });
    });
}

function tail(text: string, max = 4000): string {
  return text.length > max ? `...${text.slice(-max)}` : text;
}

async function measure(label: string, command: string, args: string[], extraEnv: Record<string, string>): Promise<Result> {
  const telegram: FakeTelegram = await startFakeTelegram({ token: TOKEN });
  const openai = await startFakeOpenAI();
  const total = CHATS * MESSAGES;
  scriptModel(openai, total + 100);
  const home = tempDir(label);
  const bubHome = join(home, ".bub");
  const env = userEnv(home, {
    BUB_HOME: bubHome,
    BUB_MODEL: "local:any",
    BUB_API_BASE: openai.url,
    BUB_API_KEY: "x",
    BUB_TAPE_STORE: "file",
    BUB_TELEGRAM_TOKEN: TOKEN,
    BUB_TELEGRAM_API_ROOT: telegram.apiRoot,
    BUB_TELEGRAM_ALLOW_ALL: "true",
    ...extraEnv,
    ...passedThrough,
  });
  const child: ChildProcess = spawn(command, args, { cwd: home, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout = tail(stdout + chunk, 8000)));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr = tail(stderr + chunk, 8000)));
  let exited = false;
  const closed = new Promise<number | null>((resolve) => child.once("close", (code) => ((exited = true), resolve(code))));
  const pid = child.pid!;
  try {
    // Ready once it has polled (bub drops the backlog with deleteWebhook first).
    const polled = (async () => {
      for (let waited = 0; waited < 30_000; waited += 20) {
        if (exited) throw new Error(`${label} exited before polling:\n${tail(stdout)}\n${tail(stderr)}`);
        if (telegram.calls.some((call) => call.method === "deleteWebhook" || call.method === "getMe") || label === "floor") break;
        await sleep(20);
      }
      await sleep(500); // the first getUpdates is waiting
    })();
    await polled;
    if (exited) throw new Error(`${label} exited before polling:\n${tail(stdout)}\n${tail(stderr)}`);

    const next = new Map<number, number>(); // chat -> seq expected next (1-based)
    const seen = new Set<string>();
    let answered = 0;
    let duplicated = 0;
    let outOfOrder = 0;
    let otherMessages = 0;
    let sent = 0;
    let lastAnswerAt = performance.now();
    const send = (chat: number, seq: number) => {
      sent++;
      telegram.sendText({ chatId: chat, userId: chat, text: `hello, this is message q${chat}x${seq} of the benchmark` });
    };
    const cpuStart = cpuMs(pid);
    const start = performance.now();
    for (let index = 0; index < CHATS; index++) {
      next.set(FIRST_CHAT + index, 1);
      send(FIRST_CHAT + index, 1);
    }
    const deadline = start + Math.max(60_000, MESSAGES * 15_000);
    let scanned = 0;
    while (answered < total && performance.now() < deadline && !exited) {
      await sleep(5);
      const calls = telegram.calls;
      for (; scanned < calls.length; scanned++) {
        const call = calls[scanned]!;
        if (call.method !== "sendMessage") continue;
        const match = /q(\d+)x(\d+)/.exec(String(call.payload.text ?? ""));
        if (!match) {
          otherMessages++;
          continue;
        }
        const key = match[0];
        const chat = Number(match[1]);
        const seq = Number(match[2]);
        if (seen.has(key)) {
          duplicated++;
          continue;
        }
        seen.add(key);
        answered++;
        lastAnswerAt = performance.now();
        if (next.get(chat) !== seq) outOfOrder++;
        next.set(chat, seq + 1);
        if (seq < MESSAGES) send(chat, seq + 1);
      }
    }
    const wallMs = lastAnswerAt - start;
    await sleep(250); // tape writes after the answer, late duplicates
    for (const call of telegram.calls.slice(scanned)) {
      const match = /q(\d+)x(\d+)/.exec(String(call.payload.text ?? ""));
      if (call.method === "sendMessage" && match && seen.has(match[0])) duplicated++;
    }
    if (exited) throw new Error(`${label} exited during the run:\n${tail(stdout)}\n${tail(stderr)}`);
    const cpu = cpuMs(pid) - cpuStart;
    const peak = peakKiB(pid);
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    const exitCode = await closed;
    clearTimeout(timer);
    return {
      label,
      sent,
      answered,
      lost: total - answered,
      duplicated,
      outOfOrder,
      otherMessages,
      cpuMs: cpu,
      cpuPerMessageMs: cpu / Math.max(answered, 1),
      peakKiB: peak,
      wallMs,
      modelRequests: openai.requests.length,
      exitCode,
    };
  } finally {
    if (!exited) child.kill("SIGKILL");
    await closed;
    await telegram.close();
    await openai.close();
  }
}

function row(result: Result): string {
  return [
    result.label.padEnd(6),
    `${result.answered}/${CHATS * MESSAGES} answered`,
    `lost ${result.lost}`,
    `dup ${result.duplicated}`,
    `order ${result.outOfOrder === 0 ? "kept" : `broken ${result.outOfOrder}x`}`,
    `CPU ${result.cpuMs.toFixed(0)} ms = ${result.cpuPerMessageMs.toFixed(3)} ms/msg`,
    `peak RSS ${(result.peakKiB / 1024).toFixed(1)} MiB`,
    `wall ${(result.wallMs / 1000).toFixed(2)} s`,
    `model calls ${result.modelRequests}`,
    `other sendMessage ${result.otherMessages}`,
    `exit ${result.exitCode}`,
  ].join(" | ");
}

if (!existsSync(FLOOR_SCRIPT)) throw new Error(`floor gateway not found at ${FLOOR_SCRIPT}`);
printMachine();
const installed = await installBub();
console.log(`${CHATS} private chats x ${MESSAGES} messages, closed loop per chat, model answers in ${MODEL_MS} ms, loopback fakes${Object.keys(passedThrough).length ? `; passed to both: ${Object.entries(passedThrough).map(([key, value]) => `${key}=${value}`).join(" ")}` : ""}`);
const bub = await measure("bub", installed.bin, ["gateway"], {});
console.log(row(bub));
const floor = await measure("floor", process.execPath, [FLOOR_SCRIPT], {});
console.log(row(floor));
const cpuRatio = bub.cpuPerMessageMs / floor.cpuPerMessageMs;
const rssRatio = bub.peakKiB / floor.peakKiB;
const verdict = (ok: boolean) => (ok ? "met" : "NOT met");
console.log(`CPU per message bub/floor: ${cpuRatio.toFixed(2)}x (goal <= ${CPU_GOAL}x: ${verdict(cpuRatio <= CPU_GOAL)})`);
console.log(`peak RSS bub/floor:        ${rssRatio.toFixed(2)}x (goal <= ${RSS_GOAL}x: ${verdict(rssRatio <= RSS_GOAL)})`);
console.log(`bub lost ${bub.lost} (goal 0: ${verdict(bub.lost === 0)}), duplicated ${bub.duplicated} (goal 0: ${verdict(bub.duplicated === 0)}), order ${bub.outOfOrder === 0 ? "kept" : "broken"} (goal kept: ${verdict(bub.outOfOrder === 0)})`);
