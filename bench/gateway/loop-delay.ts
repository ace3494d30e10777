// Bench-only preload: measures the event-loop delay of the process it is loaded into with
// `perf_hooks.monitorEventLoopDelay` (bub has no hook for it). bench/gateway/latency.ts
// loads it into the gateway it measures with
//
//   NODE_OPTIONS="--import /abs/path/bench/gateway/loop-delay.ts" BENCH_LOOP_DELAY_FILE=/tmp/x.json
//
// SIGUSR2 resets the histogram (the bench sends it when the steady load starts, so start-up
// and warm-up are left out); on SIGTERM (before the process's own handler runs its shutdown)
// or else at exit it writes, as JSON to BENCH_LOOP_DELAY_FILE, the percentiles in ms. Every
// value includes the 10 ms sampling interval: an idle loop reads about 10.1 ms, a loop
// blocked for 50 ms about 60 ms. Does nothing without BENCH_LOOP_DELAY_FILE or in a worker.
import { writeFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { isMainThread } from "node:worker_threads";

const file = process.env.BENCH_LOOP_DELAY_FILE;
const RESOLUTION_MS = 10;

if (file && isMainThread) {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  let written = false;
  const write = (when: string) => {
    if (written) return;
    written = true;
    histogram.disable();
    const ms = (ns: number) => ns / 1e6;
    const figures = {
      when,
      resolutionMs: RESOLUTION_MS,
      count: histogram.count,
      minMs: ms(histogram.min),
      meanMs: ms(histogram.mean),
      p50Ms: ms(histogram.percentile(50)),
      p90Ms: ms(histogram.percentile(90)),
      p99Ms: ms(histogram.percentile(99)),
      maxMs: ms(histogram.max),
    };
    writeFileSync(file, `${JSON.stringify(figures)}\n`);
  };
  process.on("SIGUSR2", () => histogram.reset());
  // Loaded before the program, so this listener runs before the program's own SIGTERM
  // handler; when the program has none, exit as SIGTERM's default action would.
  process.on("SIGTERM", () => {
    write("SIGTERM");
    if (process.listenerCount("SIGTERM") === 1) process.exit(143);
  });
  process.once("exit", () => write("exit"));
}
