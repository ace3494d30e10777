// Counts the synchronous calls a gateway made, from its stderr under `--trace-sync-io`, grouped
// by the call and the first frame in bub's code (dist/ of the installed package, or src/).
//
// Run: BENCH_GATEWAYS=bub BENCH_NODE_OPTIONS=--trace-sync-io BENCH_STDERR_DIR=/tmp/trace node bench/gateway/floor.ts 80 5
//      node bench/gateway/sync-traces.ts /tmp/trace/bub-*.stderr
import { readFileSync } from "node:fs";

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node bench/gateway/sync-traces.ts <gateway stderr file>...");
  process.exit(2);
}
for (const file of files) {
  const traces = readFileSync(file, "utf8").split(/^\(node:\d+\) WARNING: Detected use of sync API$/m).slice(1);
  const groups = new Map<string, number>();
  let ours = 0;
  for (const trace of traces) {
    const frames = trace.split("\n").filter((line) => line.startsWith("    at "));
    const call = (frames[0] ?? "").replace(/^ +at /, "").replace(/ \(.*/, "");
    const frame = frames.find((line) => /\/bub-ts\/dist\/|\/src\//.test(line) && !line.includes("/bub-ts/node_modules/"));
    if (frame) ours++;
    const where = frame ? frame.replace(/^ +at /, "").replace(/file:\/\/.*?\/(dist|src)\//, "").replace(/:\d+\)$/, ")") : "(no frame of bub: Node's module loader or a dependency)";
    const key = `${call} <- ${where}`;
    groups.set(key, (groups.get(key) ?? 0) + 1);
  }
  console.log(`${file}: ${traces.length} synchronous calls, ${ours} with a frame in bub's code`);
  for (const [key, count] of [...groups].sort((a, b) => b[1] - a[1])) console.log(`${String(count).padStart(7)}  ${key}`);
}
