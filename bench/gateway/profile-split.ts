// Splits CPU profiles of a gateway (`--cpu-prof`) into bub's code and each library: every
// sample goes to the nearest frame on its stack that belongs to bub (a folder of dist/ or
// src/) or to an npm package (node_modules/<name>); a sample whose whole stack is Node's own
// code counts as `node`, and V8's pseudo frames keep their names ((garbage collector),
// (program)). `(idle)` is left out of the shares.
//
// Run: BENCH_GATEWAYS=bub BENCH_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/bub-prof" node bench/gateway/floor.ts 1000 5
//      node bench/gateway/profile-split.ts /tmp/bub-prof
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** The owner of one frame: `bub/<folder>`, `<package>`, or null for Node's own code. */
function owner(frame: CallFrame): string | null {
  const url = frame.url;
  if (url === "") return frame.functionName.startsWith("(") ? frame.functionName : null;
  const packaged = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(url);
  if (packaged && packaged[1] !== "bub-ts") return packaged[1]!;
  const ours = /(?:bub-ts\/dist|\/src)\/([^/]+)\//.exec(url) ?? /(?:bub-ts\/dist|\/src)\/([^/]+)$/.exec(url);
  if (ours) return `bub/${ours[1]!.replace(/\.(js|ts)$/, "")}`;
  return null;
}

const dir = process.argv[2];
if (!dir) throw new Error("usage: node bench/gateway/profile-split.ts <folder of .cpuprofile files>");
// One table per profile (one per process: the bench profiles bub and the floor alike).
for (const name of readdirSync(dir).filter((file) => file.endsWith(".cpuprofile"))) {
  const profile = JSON.parse(readFileSync(join(dir, name), "utf8")) as CpuProfile;
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const memo = new Map<number, string>();
  const attribute = (id: number): string => {
    const known = memo.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id);
    const found = node ? owner(node.callFrame) : null;
    const up = parent.get(id);
    const result = found ?? (up === undefined ? "node" : attribute(up));
    memo.set(id, result);
    return result;
  };
  const totals = new Map<string, number>();
  profile.samples.forEach((id, index) => {
    const key = attribute(id);
    totals.set(key, (totals.get(key) ?? 0) + (profile.timeDeltas[index] ?? 0) / 1000);
  });
  totals.delete("(idle)");
  const busy = [...totals.values()].reduce((sum, ms) => sum + ms, 0);
  const ours = [...totals].filter(([key]) => key.startsWith("bub/")).reduce((sum, [, ms]) => sum + ms, 0);
  console.log(`\n${name}: busy ${busy.toFixed(0)} ms; bub's own code ${((100 * ours) / busy).toFixed(1)}%`);
  for (const [key, ms] of [...totals].sort((a, b) => b[1] - a[1])) {
    if (ms / busy >= 0.005) console.log(`${key.padEnd(36)} ${ms.toFixed(0).padStart(7)} ms  ${((100 * ms) / busy).toFixed(1).padStart(5)}%`);
  }
}
