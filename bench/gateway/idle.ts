// An idle gateway: the installed `bub gateway` (by default; BENCH_GATEWAYS=bub,floor adds
// the floor gateway) polling a fake Bot API that has nothing for it, after a warm-up of one
// message from each of 10 chats and W seconds of rest. Then every I seconds for M minutes:
// its CPU use over the interval (utime + stime from /proc/<pid>/stat, % of one core) and its
// RSS (VmRSS). Goals (from the issue): CPU <= 1% over the window, RSS flat after warm-up
// (judged here as: the last sample at most 5% above the first; a drop is memory given back).
//
// The fake Bot API answers a waiting getUpdates after the timeout the gateway asks for (30 s
// for both), as Telegram does, so an idle gateway makes one request per 30 s.
//
// Run: node bench/gateway/idle.ts [minutes=10] [warmup-seconds=30] [interval-seconds=10]
//      node bench/gateway/idle.ts 2        (a shorter run)
import { setTimeout as sleep } from "node:timers/promises";
import { printMachine } from "../support/processes.ts";
import { cpuMs, gatewaysToRun, intArg, mib, passedThroughText, rssKiB, startGateway, warmUp, type GatewayLabel } from "./support/gateway.ts";

const MINUTES = intArg(2, 10, 24 * 60);
const WARMUP_SECONDS = intArg(3, 30, 3600);
const INTERVAL_SECONDS = intArg(4, 10, 600);
const CPU_GOAL_PERCENT = 1;
const FLAT_GOAL = 0.05;

async function measure(label: GatewayLabel): Promise<void> {
  const gateway = await startGateway(label, { modelReplies: 100 });
  const samples: { second: number; cpuPercent: number; rssKiB: number }[] = [];
  let cpuTotal = 0;
  let firstKiB = 0;
  try {
    await warmUp(gateway, 10);
    await sleep(WARMUP_SECONDS * 1000);
    gateway.assertRunning("during the warm-up");
    firstKiB = rssKiB(gateway.pid);
    const cpuStart = cpuMs(gateway.pid);
    let cpuBefore = cpuStart;
    const start = performance.now();
    const count = Math.ceil((MINUTES * 60) / INTERVAL_SECONDS);
    for (let index = 1; index <= count; index++) {
      await sleep(Math.max(0, start + index * INTERVAL_SECONDS * 1000 - performance.now()));
      gateway.assertRunning("while idle");
      const cpu = cpuMs(gateway.pid);
      samples.push({ second: index * INTERVAL_SECONDS, cpuPercent: ((cpu - cpuBefore) / (INTERVAL_SECONDS * 1000)) * 100, rssKiB: rssKiB(gateway.pid) });
      cpuBefore = cpu;
    }
    cpuTotal = ((cpuBefore - cpuStart) / (performance.now() - start)) * 100;
  } finally {
    await gateway.stop();
  }
  console.log(`${label}: CPU % of a core and RSS every ${INTERVAL_SECONDS} s (RSS at the start of the window ${mib(firstKiB)} MiB):`);
  const perLine = 6;
  for (let index = 0; index < samples.length; index += perLine)
    console.log(`  ${samples.slice(index, index + perLine).map((sample) => `+${sample.second}s ${sample.cpuPercent.toFixed(2)}% ${mib(sample.rssKiB)}`).join(" | ")}`);
  const rss = samples.map((sample) => sample.rssKiB);
  const last = rss.at(-1)!;
  const growth = (last - firstKiB) / firstKiB;
  const verdict = (ok: boolean) => (ok ? "met" : "NOT met");
  console.log(
    `${label}: CPU over ${MINUTES} min ${cpuTotal.toFixed(2)}% of a core (goal <= ${CPU_GOAL_PERCENT}%: ${verdict(cpuTotal <= CPU_GOAL_PERCENT)}), highest interval ${Math.max(...samples.map((sample) => sample.cpuPercent)).toFixed(2)}% | RSS ${mib(firstKiB)} -> ${mib(last)} MiB (${(growth * 100).toFixed(1)}%; min ${mib(Math.min(...rss))}, max ${mib(Math.max(...rss))}; no growth over ${FLAT_GOAL * 100}%: ${verdict(growth <= FLAT_GOAL)})`,
  );
}

printMachine();
const passed = passedThroughText();
console.log(`idle for ${MINUTES} min after a warm-up (10 messages, then ${WARMUP_SECONDS} s), sampled every ${INTERVAL_SECONDS} s${passed ? `; passed on: ${passed}` : ""}`);
for (const label of gatewaysToRun(["bub"])) await measure(label);
