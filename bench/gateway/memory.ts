// Does a gateway give its memory back after a burst? The installed `bub gateway` (and the
// floor gateway, for comparison) on loopback fakes: RSS when idle, the peak during a burst of
// N chats x M messages (the closed loop of floor.ts, support/workload.ts), then RSS sampled
// every second for S seconds after the burst. Goal (from the issue): RSS a minute after the
// burst within 20% of the idle figure.
//
// Idle figures: "idle" is VmRSS 2 s after the gateway started polling, no message yet (the
// issue's idle figure); "warm" is VmRSS 3 s after it answered one message (bub loads its
// agent on the first message). Peak is VmHWM after the burst. No GC is forced: this is
// what the process holds on its own.
//
// Run: node bench/gateway/memory.ts [chats=1000] [messages=5] [seconds=60]
//      BENCH_GATEWAYS=bub node bench/gateway/memory.ts     (bub only; default bub,floor)
// BUB_* and FLOOR_* variables are passed to both gateways (support/gateway.ts).
import { setTimeout as sleep } from "node:timers/promises";
import { printMachine } from "../support/processes.ts";
import { gatewaysToRun, intArg, mib, MODEL_MS, passedThroughText, peakKiB, rssKiB, startGateway, warmUp, type GatewayLabel } from "./support/gateway.ts";
import { burstSummary, closedLoop } from "./support/workload.ts";

const CHATS = intArg(2, 1000, 10_000);
const MESSAGES = intArg(3, 5, 100);
const SECONDS = intArg(4, 60, 3600);
/** Goal: RSS S seconds after the burst <= 1.2 x idle. */
const GOAL = 1.2;

interface MemoryResult {
  label: GatewayLabel;
  idleKiB: number;
  warmKiB: number;
  peakKiB: number;
  /** VmRSS at 1, 2, ... S seconds after the last answer. */
  afterKiB: number[];
}

async function measure(label: GatewayLabel): Promise<MemoryResult> {
  const gateway = await startGateway(label, { modelReplies: CHATS * MESSAGES + 100 });
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

printMachine();
const passed = passedThroughText();
console.log(`${CHATS} private chats x ${MESSAGES} messages (closed loop), model answers in ${MODEL_MS} ms, then RSS every second for ${SECONDS} s${passed ? `; passed to both: ${passed}` : ""}`);
for (const label of gatewaysToRun(["bub", "floor"])) report(await measure(label));
