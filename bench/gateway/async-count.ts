// Preloaded into a gateway under a bench, counts the asynchronous resources the process
// creates, by type (`PROMISE`, `TickObject`, `FSREQPROMISE`, `Immediate`, `Timeout`, ...),
// with an `async_hooks` hook, and prints them as one line on stdout when the process exits:
//
//   async-resources {"PROMISE":955123,"TickObject":18300,...}
//
// `BENCH_STDERR_DIR` keeps each gateway's stdout (support/gateway.ts); divide by the messages
// the run answered. A count per message does not move with the machine's load, unlike CPU
// time, so it shows a change of a few percent in how much work a message makes that CPU
// figures on a noisy machine hide. The hook slows the process down: read no CPU figure from
// a run that loads it. Start-up is counted too (a few thousand promises).
//
// Run: BENCH_STDERR_DIR=/tmp/async BENCH_LIBRARY_FLOOR=1 BENCH_NODE_OPTIONS="--import $PWD/bench/gateway/async-count.ts" node bench/gateway/floor.ts 200 5
//      grep -h async-resources /tmp/async/*.stdout
import { createHook } from "node:async_hooks";
import { writeSync } from "node:fs";

const counts: Record<string, number> = {};
createHook({
  init(_id, type) {
    counts[type] = (counts[type] ?? 0) + 1;
  },
}).enable();
process.on("exit", () => {
  writeSync(1, `async-resources ${JSON.stringify(counts)}\n`);
});
