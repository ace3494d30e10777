// Does a gateway give its memory back after a burst, and does its memory follow the work
// rather than the history? The installed `bub gateway` (and the floor gateway, for
// comparison) on loopback fakes, in one of two modes.
//
// Burst (default): RSS when idle, the peak during a burst of N chats x M messages (the closed
// loop of floor.ts, support/workload.ts), then RSS sampled every second for S seconds after
// the burst. Goal (from the issue): RSS a minute after the burst within 20% of the idle figure.
// Idle figures: "idle" is VmRSS 2 s after the gateway started polling, no message yet (the
// issue's idle figure); "warm" is VmRSS 3 s after it answered one message (bub loads its
// agent on the first message). Peak is VmHWM after the burst.
//
// Rounds (`rounds`): R rounds of C chats never seen before x M messages each (round r uses
// chats FIRST_CHAT + r x C onwards), VmRSS W seconds after each round (and, with L > W, L
// seconds after it too, before the next round starts). Goal (from the issue, 5 rounds of
// 3,000): RSS after the fifth round <= 1.1 x after the first, i.e. memory does not grow with
// the number of chats the gateway has served. Ten seconds after a burst V8 has often not
// given back the heap the burst grew (that takes it 10-60 s of quiet): L = 40 or so shows
// what the process keeps.
//
// No GC is forced in either mode: this is what the process holds on its own.
//
// Run: node bench/gateway/memory.ts [chats=1000] [messages=5] [seconds=60]
//      node bench/gateway/memory.ts rounds [rounds=5] [chats=3000] [messages=1] [wait=10] [later=0]
//      BENCH_GATEWAYS=bub node bench/gateway/memory.ts     (bub only; default bub,floor)
// BUB_*, FLOOR_* and UV_* variables are passed to both gateways (support/gateway.ts);
// BENCH_NODE_OPTIONS becomes their NODE_OPTIONS (e.g. `--heapsnapshot-signal=SIGUSR2
// --diagnostic-dir=/tmp/snaps`), and with BENCH_SNAPSHOT_SIGNAL=SIGUSR2 the rounds mode sends
// that signal after each round's reading (and waits W seconds more for the snapshot).
import { loadavg } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { printMachine } from "../support/processes.ts";
import { FIRST_CHAT, gatewaysToRun, intArg, mib, MODEL_MS, passedThroughText, peakKiB, rssKiB, startGateway, warmUp, type GatewayLabel } from "./support/gateway.ts";
import { burstSummary, closedLoop } from "./support/workload.ts";

const ROUNDS_MODE = process.argv[2] === "rounds";
const CHATS = ROUNDS_MODE ? 0 : intArg(2, 1000, 10_000);
const MESSAGES = ROUNDS_MODE ? 0 : intArg(3, 5, 100);
const SECONDS = ROUNDS_MODE ? 0 : intArg(4, 60, 3600);
/** Goal: RSS S seconds after the burst <= 1.2 x idle. */
const GOAL = 1.2;
/** Goal of the rounds mode: RSS after the last round <= 1.1 x after the first. */
const ROUNDS_GOAL = 1.1;
/** Extra environment of both gateways: BENCH_NODE_OPTIONS as their NODE_OPTIONS. */
const EXTRA_ENV: Record<string, string> = process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {};

interface MemoryResult {
  label: GatewayLabel;
  idleKiB: number;
  warmKiB: number;
  peakKiB: number;
  /** VmRSS at 1, 2, ... S seconds after the last answer. */
  afterKiB: number[];
}

async function measure(label: GatewayLabel): Promise<MemoryResult> {
  const gateway = await startGateway(label, { modelReplies: CHATS * MESSAGES + 100, env: EXTRA_ENV });
  try {
    await sleep(2_000);
    const idleKiB = rssKiB(gateway.pid);
    await warmUp(gateway, 1);
    await sleep(3_000);
    const warmKiB = rssKiB(gateway.pid);
    const burst = await closedLoop(gateway, CHATS, MESSAGES);
    console.log(`${label.padEnd(6)}| ${burstSummary(burst, CHATS * MESSAGES)}`);
    const afterKiB: number[] = [];
    const start = performance.now();
    for (let second = 1; second <= SECONDS; second++) {
      await sleep(Math.max(0, start + second * 1000 - performance.now()));
      gateway.assertRunning("after the burst");
      afterKiB.push(rssKiB(gateway.pid));
    }
    return { label, idleKiB, warmKiB, peakKiB: peakKiB(gateway.pid), afterKiB };
  } finally {
    await gateway.stop();
  }
}

function report(result: MemoryResult): void {
  const last = result.afterKiB.at(-1)!;
  const marks = [1, 5, 10, 20, 30, 45, 60, 120, 300, 600].filter((second) => second < SECONDS).concat(SECONDS);
  const series = marks.map((second) => `+${second} s ${mib(result.afterKiB[second - 1]!)}`).join(", ");
  console.log(`${result.label.padEnd(6)}| idle ${mib(result.idleKiB)} MiB | warm ${mib(result.warmKiB)} MiB | peak ${mib(result.peakKiB)} MiB | after the burst: ${series} MiB`);
  const ratio = last / result.idleKiB;
  console.log(`${" ".repeat(6)}| +${SECONDS} s / idle = ${ratio.toFixed(2)}x (goal <= ${GOAL}x: ${ratio <= GOAL ? "met" : "NOT met"}); +${SECONDS} s / warm = ${(last / result.warmKiB).toFixed(2)}x; lowest after the burst ${mib(Math.min(...result.afterKiB))} MiB`);
}

interface RoundsResult {
  label: GatewayLabel;
  warmKiB: number;
  /** VmRSS `wait` seconds after each round. */
  afterKiB: number[];
  /** VmRSS `later` seconds after each round (empty when not asked for). */
  laterKiB: number[];
  peakKiB: number;
}

async function measureRounds(label: GatewayLabel, rounds: number, chats: number, messages: number, waitSeconds: number, laterSeconds: number): Promise<RoundsResult> {
  const gateway = await startGateway(label, { modelReplies: rounds * chats * messages + 100, env: EXTRA_ENV });
  const signal = process.env.BENCH_SNAPSHOT_SIGNAL;
  try {
    await warmUp(gateway, 1);
    await sleep(3_000);
    const warmKiB = rssKiB(gateway.pid);
    const afterKiB: number[] = [];
    const laterKiB: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const burst = await closedLoop(gateway, chats, messages, Math.max(120_000, chats * messages * 100), FIRST_CHAT + round * chats);
      await sleep(waitSeconds * 1000);
      gateway.assertRunning("after a round");
      afterKiB.push(rssKiB(gateway.pid));
      if (laterSeconds > waitSeconds) {
        await sleep((laterSeconds - waitSeconds) * 1000);
        gateway.assertRunning("after a round");
        laterKiB.push(rssKiB(gateway.pid));
      }
      const later = laterKiB.length > round ? ` | +${laterSeconds} s ${mib(laterKiB[round] ?? NaN)} MiB` : "";
      console.log(`${label.padEnd(6)}| round ${round + 1}: ${burstSummary(burst, chats * messages)} | RSS +${waitSeconds} s ${mib(afterKiB.at(-1) ?? NaN)} MiB${later} | load ${loadavg().map((load) => load.toFixed(2)).join(" ")}`);
      if (signal) {
        process.kill(gateway.pid, signal);
        await sleep(waitSeconds * 1000);
      }
    }
    return { label, warmKiB, afterKiB, laterKiB, peakKiB: peakKiB(gateway.pid) };
  } finally {
    await gateway.stop();
  }
}

function reportRounds(results: RoundsResult[], waitSeconds: number, laterSeconds: number): void {
  const series = (label: string, seconds: number, pick: (result: RoundsResult) => number[]) => {
    console.log(`RSS ${seconds} s after each round, MiB:`);
    for (const result of results) {
      const kib = pick(result);
      const ratio = (kib.at(-1) ?? NaN) / (kib[0] ?? NaN);
      console.log(`${result.label.padEnd(6)}| warm ${mib(result.warmKiB)} | ${kib.map(mib).join(", ")} | peak ${mib(result.peakKiB)} | last/first ${ratio.toFixed(2)}x (${label} <= ${ROUNDS_GOAL}x: ${ratio <= ROUNDS_GOAL ? "met" : "NOT met"})`);
    }
  };
  series("goal", waitSeconds, (result) => result.afterKiB);
  if (laterSeconds > waitSeconds) series("same bound", laterSeconds, (result) => result.laterKiB);
}

printMachine();
const passed = [passedThroughText(), EXTRA_ENV.NODE_OPTIONS ? `NODE_OPTIONS=${EXTRA_ENV.NODE_OPTIONS}` : ""].filter(Boolean).join(" ");
if (ROUNDS_MODE) {
  const rounds = intArg(3, 5, 100);
  const chats = intArg(4, 3000, 10_000);
  const messages = intArg(5, 1, 100);
  const waitSeconds = intArg(6, 10, 600);
  const laterSeconds = process.argv[7] === undefined ? 0 : intArg(7, 0, 600);
  console.log(`${rounds} rounds of ${chats} new private chats x ${messages} messages (closed loop), model answers in ${MODEL_MS} ms, RSS ${waitSeconds} s after each round${laterSeconds > waitSeconds ? ` and ${laterSeconds} s after it` : ""}${passed ? `; passed to both: ${passed}` : ""}`);
  const results: RoundsResult[] = [];
  for (const label of gatewaysToRun(["bub", "floor"])) results.push(await measureRounds(label, rounds, chats, messages, waitSeconds, laterSeconds));
  reportRounds(results, waitSeconds, laterSeconds);
} else {
  console.log(`${CHATS} private chats x ${MESSAGES} messages (closed loop), model answers in ${MODEL_MS} ms, then RSS every second for ${SECONDS} s${passed ? `; passed to both: ${passed}` : ""}`);
  for (const label of gatewaysToRun(["bub", "floor"])) report(await measure(label));
}
