// Latency under a steady load: R messages per second spread over C private chats (message i
// goes to chat i mod C, so a chat gets one every C/R seconds), model answering in 20 ms,
// for the installed `bub gateway` and the floor gateway, one after the other, each on its own
// loopback fakes (support/gateway.ts).
//
// Measured per gateway, over the steady part only (after 20 warm-up messages):
// - time from an update being available (pushed to the fake Bot API, whose waiting
//   getUpdates answers at once) to its reply reaching the fake (sendMessage received):
//   p50 / p90 / p99 / max, and p99 minus the model's 20 ms;
// - event-loop delay inside the gateway process: loop-delay.ts is preloaded with
//   NODE_OPTIONS=--import (bench only), reset when the steady load starts and read at
//   SIGTERM; its figures include the monitor's 10 ms sampling interval;
// - the gateway's CPU use (utime + stime) over the steady part, as % of one core.
// Goals (from the issue): p99 update-to-reply <= model time + 50 ms, p99 event-loop delay
// <= 20 ms.
//
// BUB_DEBOUNCE_SECONDS=0 is set for both (the default 1 s quiet timer would add a second to
// every reply); set it yourself to override. Other BUB_* / FLOOR_* / UV_* variables are passed on.
//
// Run: node bench/gateway/latency.ts [rate=200] [seconds=30] [chats=1000]
//      BENCH_GATEWAYS=bub node bench/gateway/latency.ts     (bub only; default bub,floor)
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { printMachine, quantile, tempDir } from "../support/processes.ts";
import { answerToken, cpuMs, gatewaysToRun, intArg, MODEL_MS, onSendMessage, passedThroughText, startGateway, warmUp, type GatewayLabel } from "./support/gateway.ts";
import { steadyLoad } from "./support/workload.ts";

const RATE = intArg(2, 200, 5000);
const SECONDS = intArg(3, 30, 3600);
const CHATS = intArg(4, 1000, 100_000);
const PRELOAD = fileURLToPath(new URL("./loop-delay.ts", import.meta.url));
const LATENCY_GOAL_MS = 50;
const LOOP_GOAL_MS = 20;

interface LoopDelay {
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

async function measure(label: GatewayLabel): Promise<void> {
  const total = RATE * SECONDS;
  const loopFile = join(tempDir("loop-delay"), "figures.json");
  const gateway = await startGateway(label, {
    modelReplies: total + 100,
    env: { BUB_DEBOUNCE_SECONDS: "0", NODE_OPTIONS: `--import ${PRELOAD}`, BENCH_LOOP_DELAY_FILE: loopFile },
  });
  const pushedAt = new Map<string, number>();
  const latencies: number[] = [];
  let duplicated = 0;
  let cpu = 0;
  let steadyMs = 0;
  let lateMs = 0;
  let lastPushAt = 0;
  let lastReplyAt = 0;
  try {
    await warmUp(gateway, 20);
    await sleep(1_000);
    onSendMessage(gateway.telegram, (payload, at) => {
      const token = answerToken(payload);
      const pushed = token && pushedAt.get(token.key);
      if (pushed === undefined) return;
      if (pushed < 0) duplicated++;
      else {
        latencies.push(at - pushed);
        lastReplyAt = at;
        pushedAt.set(token!.key, -1);
      }
    });
    gateway.child.kill("SIGUSR2"); // loop-delay.ts: measure from here
    const cpuStart = cpuMs(gateway.pid);
    const start = performance.now();
    ({ lateMs, lastPushAt } = await steadyLoad(gateway, { rate: RATE, seconds: SECONDS, chats: CHATS }, pushedAt));
    const deadline = performance.now() + 30_000;
    while (latencies.length < total && performance.now() < deadline) await sleep(10);
    steadyMs = performance.now() - start;
    cpu = cpuMs(gateway.pid) - cpuStart;
  } finally {
    await gateway.stop();
  }
  const loop = JSON.parse(readFileSync(loopFile, "utf8")) as LoopDelay;
  const q = (p: number) => quantile(latencies, p).toFixed(1);
  const p99 = quantile(latencies, 0.99);
  const verdict = (ok: boolean) => (ok ? "met" : "NOT met");
  console.log(
    `${label.padEnd(6)}| ${latencies.length}/${total} answered, lost ${total - latencies.length}, dup ${duplicated} | update -> reply p50 ${q(0.5)} p90 ${q(0.9)} p99 ${q(0.99)} max ${q(1)} ms; p99 - model = ${(p99 - MODEL_MS).toFixed(1)} ms (goal <= ${LATENCY_GOAL_MS}: ${verdict(p99 - MODEL_MS <= LATENCY_GOAL_MS)})`,
  );
  console.log(
    `${" ".repeat(6)}| event-loop delay (10 ms sampling included) p50 ${loop.p50Ms.toFixed(1)} p99 ${loop.p99Ms.toFixed(1)} max ${loop.maxMs.toFixed(1)} ms over ${loop.count} samples (p99 goal <= ${LOOP_GOAL_MS}: ${verdict(loop.p99Ms <= LOOP_GOAL_MS)}) | last reply ${((lastReplyAt - lastPushAt) / 1000).toFixed(2)} s after the last update | CPU ${((cpu / steadyMs) * 100).toFixed(0)}% of a core (first update to last reply) | generator at most ${lateMs.toFixed(1)} ms behind schedule`,
  );
}

printMachine();
const passed = passedThroughText();
console.log(`steady ${RATE} messages/s for ${SECONDS} s over ${CHATS} private chats, model answers in ${MODEL_MS} ms, BUB_DEBOUNCE_SECONDS=0${passed ? `; passed to both: ${passed}` : ""}`);
for (const label of gatewaysToRun(["bub", "floor"])) await measure(label);
