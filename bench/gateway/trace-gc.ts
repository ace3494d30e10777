// Preloaded into a gateway under a bench, turns on V8's `--trace-gc-nvp`: one line per
// garbage collection with its pause, the time its helper threads spent, and the bytes it
// copied and promoted. Node refuses that flag in NODE_OPTIONS; set at run time it applies
// from the next collection on. The lines go to the gateway's stdout, which
// `BENCH_STDERR_DIR` keeps (support/gateway.ts), and `gc-summary.ts` adds them up.
//
// Run: BENCH_GATEWAYS=bub BENCH_STDERR_DIR=/tmp/gc BENCH_NODE_OPTIONS="--import $PWD/bench/gateway/trace-gc.ts" node bench/gateway/floor.ts 1000 5
//      node bench/gateway/gc-summary.ts /tmp/gc
import { setFlagsFromString } from "node:v8";

setFlagsFromString("--trace-gc-nvp");
