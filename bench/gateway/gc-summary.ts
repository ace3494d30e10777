// Adds up V8's `--trace-gc-nvp` lines (see trace-gc.ts) per kind of collection: `s` the young
// generation's scavenges, `mc` full mark-compacts. For each: how many, the main thread's pause,
// the helper threads' time (`background.scavenge.parallel`), and what survived: bytes copied
// within the young generation and bytes promoted to the old one. What survives is what a
// scavenge costs, and what is promoted is garbage a full collection must find later.
//
// Run: node bench/gateway/gc-summary.ts /tmp/gc     (a folder of <label>-<pid>.stdout files)
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

interface Totals {
  count: number;
  pauseMs: number;
  helpersMs: number;
  allocated: number;
  copied: number;
  promoted: number;
}

const dir = process.argv[2];
if (!dir) throw new Error("usage: node bench/gateway/gc-summary.ts <folder of .stdout files>");
const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;
for (const name of readdirSync(dir).filter((file) => file.endsWith(".stdout"))) {
  const byKind = new Map<string, Totals>();
  for (const line of readFileSync(join(dir, name), "utf8").split("\n")) {
    const kind = / gc=(\w+)/.exec(line)?.[1];
    if (!kind) continue;
    const value = (key: string) => Number(new RegExp(` ${key.replaceAll(".", "\\.")}=([0-9.]+)`).exec(line)?.[1] ?? 0);
    let totals = byKind.get(kind);
    if (!totals) byKind.set(kind, (totals = { count: 0, pauseMs: 0, helpersMs: 0, allocated: 0, copied: 0, promoted: 0 }));
    totals.count++;
    totals.pauseMs += value("pause");
    totals.helpersMs += value("background.scavenge.parallel");
    totals.allocated += value("allocated");
    totals.copied += value("new_space_survived");
    totals.promoted += value("promoted");
  }
  console.log(name);
  for (const [kind, t] of byKind) {
    console.log(`  ${kind.padEnd(3)} ${String(t.count).padStart(4)} × | pause ${t.pauseMs.toFixed(0)} ms | helper threads ${t.helpersMs.toFixed(0)} ms | allocated ${mib(t.allocated)} | copied ${mib(t.copied)} | promoted ${mib(t.promoted)}`);
  }
}
