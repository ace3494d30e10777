// Gateway admission and scheduling: an in-process channel feeds 1,000 sessions x 5 messages
// (interleaved, as fast as possible) through a ChannelManager on a kernel BubFramework with
// BUB_ADMISSION=follow_up (the channel manager's admission default) and a model that
// answers in 20 ms. Measures the wall time from the first message to the last outbound
// against the ideal (5 x 20 ms, sessions in parallel), checks that every session got its 5
// answers in order, and the heap left per idle session once the run is over.
// Run: node bench/gateway/admission.ts [runs] [sessions]
// (re-spawns itself with --expose-gc; `node --expose-gc bench/gateway/admission.ts` works too)
import { spawnSync } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { kernelFramework } from "../../test/support/framework.ts";

if (typeof globalThis.gc !== "function") {
  const child = spawnSync(process.execPath, ["--expose-gc", ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: "inherit" });
  process.exit(child.status ?? 1);
}

const { BubFramework } = await import("../../src/kernel/framework.ts");
const { ChannelManager } = await import("../../src/channels/manager.ts");
const { ChannelMessage } = await import("../../src/channels/message.ts");
const { createSteeringInbox } = await import("../../src/channels/steering.ts");
const { channelSettings } = await import("../../src/builtin/settings.ts");
type Envelope = import("../../src/kernel/envelope.ts").Envelope;
type Channel = import("../../src/kernel/types.ts").Channel;
type BubFrameworkT = import("../../src/kernel/framework.ts").BubFramework;

const runs = Number(process.argv[2] ?? 7);
const SESSIONS = Number(process.argv[3] ?? 1000);
const PER_SESSION = 5;
const MODEL_MS = 20;
const IDEAL_MS = PER_SESSION * MODEL_MS;
const TIME_TARGET = 1.2;
const MEMORY_TARGET_KB = 20;
const gc = globalThis.gc as () => void;

/** An in-process channel: no debounce, records what it is sent (session → contents in arrival order). */
class InProcessChannel implements Channel {
  readonly name = "bench";
  readonly needsDebounce = false;
  received = new Map<string, string[]>();
  outbounds = 0;
  lastSendAt = 0;
  firstSessionDoneAt = 0;

  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  async send(message: Envelope): Promise<void> {
    this.lastSendAt = performance.now();
    this.outbounds++;
    // The manager sends ChannelMessages; read their fields directly.
    const { sessionId, content } = message as InstanceType<typeof ChannelMessage>;
    const list = this.received.get(sessionId);
    if (list) list.push(content);
    else this.received.set(sessionId, [content]);
    if (this.firstSessionDoneAt === 0 && list?.length === PER_SESSION) this.firstSessionDoneAt = this.lastSendAt;
  }
}

interface Setup {
  bub: BubFrameworkT;
  manager: InstanceType<typeof ChannelManager>;
  channel: InProcessChannel;
  stop: AbortController;
  done: Promise<void>;
}

async function setup(): Promise<Setup> {
  const bub = kernelFramework({ env: { BUB_ADMISSION: "follow_up" } });
  bub.settings.register(channelSettings);
  // What the builtin plugin contributes to a gateway turn, minus the agent: the in-memory
  // steering inbox (admission from BUB_ADMISSION and routing are the channel manager's own).
  bub.runtime.register(
    {
      name: "bench",
      provideSteeringInbox: () => createSteeringInbox(),
      loadState: ({ sessionId }) => ({ session_id: sessionId }),
      runModel: async ({ prompt }) => {
        await sleep(MODEL_MS);
        return `re:${String(prompt)}`;
      },
    },
    "bench",
  );
  const channel = new InProcessChannel();
  const manager = new ChannelManager(bub, { channels: [channel], enabledChannels: [channel.name], graceSeconds: 30 });
  const stop = new AbortController();
  const done = manager.run(stop.signal);
  await manager.ready();
  return { bub, manager, channel, stop, done };
}

function heapUsed(): number {
  for (let index = 0; index < 4; index++) gc();
  return process.memoryUsage().heapUsed;
}

interface RunResult {
  /** Until every handleMessage promise resolved (all 5,000 admitted). */
  admitMs: number;
  /** Until the first session had all its answers. */
  firstDoneMs: number;
  /** Until the last outbound. */
  wallMs: number;
  /** Process CPU time (main thread and GC threads) from the first message to idle. */
  cpuMs: number;
  lost: number;
  reordered: number;
  extra: number;
  /** Heap left per session once idle, against the same setup before any message (memory runs only). */
  bytesPerSession: number | null;
}

async function runOnce(sessions: number, measureMemory: boolean): Promise<RunResult> {
  const s = await setup();
  let baseline = 0;
  if (measureMemory) {
    await sleep(10);
    baseline = heapUsed();
  }

  const cpuStart = process.cpuUsage();
  const start = performance.now();
  const admitted: Promise<void>[] = [];
  // Interleaved: every session's first message, then every session's second, and so on.
  for (let index = 0; index < PER_SESSION; index++) {
    for (let session = 0; session < sessions; session++) {
      const chatId = String(session);
      admitted.push(s.manager.handleMessage(new ChannelMessage({ sessionId: `bench:${chatId}`, channel: "bench", chatId, content: `m${index}`, isActive: true })));
    }
  }
  await Promise.all(admitted);
  const admitMs = performance.now() - start;
  admitted.length = 0;
  await s.manager.idle();
  const wallMs = s.channel.lastSendAt - start;
  const cpu = process.cpuUsage(cpuStart);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const firstDoneMs = s.channel.firstSessionDoneAt - start;

  let lost = 0;
  let reordered = 0;
  let extra = 0;
  const expected = Array.from({ length: PER_SESSION }, (_, index) => `re:m${index}`);
  for (let session = 0; session < sessions; session++) {
    const got = s.channel.received.get(`bench:${session}`) ?? [];
    lost += expected.filter((content) => !got.includes(content)).length;
    extra += Math.max(0, got.length - PER_SESSION);
    const known = got.filter((content) => expected.includes(content)).map((content) => Number(content.slice("re:m".length)));
    for (let index = 1; index < known.length; index++) if (known[index]! < known[index - 1]!) reordered++;
  }
  let bytesPerSession: number | null = null;
  if (measureMemory) {
    // The recordings are the benchmark's, not the runtime's: drop them before measuring.
    s.channel.received = new Map();
    await sleep(10);
    bytesPerSession = (heapUsed() - baseline) / sessions;
  }
  s.stop.abort();
  await s.done;
  return { admitMs, firstDoneMs, wallMs, cpuMs, lost, reordered, extra, bytesPerSession };
}

// Timing runs never force a GC (a forced full GC shrinks the heap and makes the next burst
// pay for regrowing it: about 2x the time). Warm-up runs are not reported: a gateway runs
// for days, so the figures are for JIT-compiled code (a cold first run is 2-4x slower).
const WARM_UP = 5;
for (let index = 0; index < WARM_UP; index++) await runOnce(SESSIONS, false);
const timed: RunResult[] = [];
for (let run = 0; run < runs; run++) timed.push(await runOnce(SESSIONS, false));
const MEMORY_RUNS = 3;
const memoryRuns: RunResult[] = [];
for (let run = 0; run < MEMORY_RUNS; run++) memoryRuns.push(await runOnce(SESSIONS, true));

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const pad = (text: string, width: number) => text.padEnd(width);
const ms = (value: number) => `${value.toFixed(1)} ms`;
console.log(`gateway admission: ${SESSIONS.toLocaleString("en")} sessions x ${PER_SESSION} messages, follow_up admission, ${MODEL_MS} ms model; ${runs} timed runs after ${WARM_UP} warm-up runs, then ${MEMORY_RUNS} memory runs`);
console.log(`${pad("run", 9)}${pad("all admitted", 14)}${pad("1st session done", 18)}${pad("last outbound", 15)}${pad("x ideal", 9)}${pad("cpu", 9)}${pad("lost", 6)}${pad("reordered", 11)}${pad("extra", 7)}heap/idle session`);
const row = (label: string, result: RunResult) =>
  console.log(
    `${pad(label, 9)}${pad(ms(result.admitMs), 14)}${pad(ms(result.firstDoneMs), 18)}${pad(ms(result.wallMs), 15)}${pad((result.wallMs / IDEAL_MS).toFixed(2), 9)}${pad(`${result.cpuMs.toFixed(0)} ms`, 9)}${pad(String(result.lost), 6)}${pad(String(result.reordered), 11)}${pad(String(result.extra), 7)}${result.bytesPerSession === null ? "-" : `${(result.bytesPerSession / 1024).toFixed(2)} KB`}`,
  );
timed.forEach((result, index) => row(String(index + 1), result));
memoryRuns.forEach((result, index) => row(`mem ${index + 1}`, result));
const all = [...timed, ...memoryRuns];
const wall = median(timed.map((result) => result.wallMs));
const memory = median(memoryRuns.map((result) => result.bytesPerSession!)) / 1024;
const lost = all.reduce((sum, result) => sum + result.lost + result.extra, 0);
const reordered = all.reduce((sum, result) => sum + result.reordered, 0);
const verdict = (ok: boolean) => (ok ? "met" : "NOT MET");
console.log("");
console.log(`${pad("measure", 36)}${pad("median / total", 30)}${pad("target", 20)}result`);
console.log(`${pad("total time (first msg -> last out)", 36)}${pad(`${ms(wall)} = ${(wall / IDEAL_MS).toFixed(2)}x ideal`, 30)}${pad(`<= ${TIME_TARGET}x ${IDEAL_MS} ms`, 20)}${verdict(wall <= TIME_TARGET * IDEAL_MS)}`);
console.log(`${pad("messages lost or duplicated (all)", 36)}${pad(String(lost), 30)}${pad("0", 20)}${verdict(lost === 0)}`);
console.log(`${pad("messages reordered (all runs)", 36)}${pad(String(reordered), 30)}${pad("0", 20)}${verdict(reordered === 0)}`);
console.log(`${pad("heap per idle session after a run", 36)}${pad(`${memory.toFixed(2)} KB`, 30)}${pad(`<= ${MEMORY_TARGET_KB} KB`, 20)}${verdict(memory <= MEMORY_TARGET_KB)}`);
