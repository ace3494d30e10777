// System calls per message: the installed `bub gateway` and the floor gateway, one after the
// other, each under `strace -f -c` (every thread, libuv's thread pool included) for a closed-loop
// burst of N chats x M messages on the loopback fakes (support/gateway.ts, support/workload.ts).
//
// Why: CPU time on a shared machine varies by a third from run to run, while these counts vary
// by a few per cent. A change that removes a file-system call, a sync or a lock from each turn
// shows here at once, with the call it removed. Under strace the gateways run several times
// slower, so this bench reports counts only, never time.
//
// Printed per gateway: messages answered, the total per message answered (`futex` left out: a
// traced process waits on its locks far more often than it would untraced, so that count
// changes from run to run), then each call per message, most frequent first (those at 0.05 or
// more). Needs `strace` and the right to trace the gateway (root, or kernel.yama.ptrace_scope
// 0). Passed to both gateways: BUB_*, FLOOR_* and UV_* variables of this process.
//
// Run: node bench/gateway/syscalls.ts [chats=200] [messages=5]
//      BENCH_GATEWAYS=bub node bench/gateway/syscalls.ts 1000 5     (bub only; default bub,floor)
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { printMachine, tempDir } from "../support/processes.ts";
import { gatewaysToRun, intArg, passedThroughText, startGateway, type GatewayLabel } from "./support/gateway.ts";
import { closedLoop } from "./support/workload.ts";

const CHATS = intArg(2, 200, 10_000);
const MESSAGES = intArg(3, 5, 100);
/** Calls rarer than this per message are left out of the listing (they are in the total). */
const SHOWN_FROM = 0.05;

/** `strace -c`'s table as calls by system call name. */
function parseSummary(text: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (const line of text.split("\n")) {
    // % time     seconds  usecs/call     calls    errors syscall
    const fields = line.trim().split(/\s+/);
    if (fields.length < 5 || !/^\d+(\.\d+)?$/.test(fields[0]) || fields.at(-1) === "total") continue;
    const name = fields.at(-1) ?? "";
    const count = Number(fields[3]);
    if (Number.isInteger(count)) calls.set(name, (calls.get(name) ?? 0) + count);
  }
  return calls;
}

/** Resolves once strace says it is attached to the process (on stderr, which is read to its end). */
function attached(strace: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let said = "";
    strace.stderr?.on("data", (chunk: Buffer) => {
      said += String(chunk);
      if (/attached/.test(said)) resolve();
    });
    strace.once("exit", () => reject(new Error(`strace ended: ${said.trim() || "no output"} (it needs root, or kernel.yama.ptrace_scope 0)`)));
    strace.once("error", (error) => reject(new Error(`cannot run strace (${error.message}): install it, e.g. apt install strace`)));
  });
}

/** Detaches strace (SIGINT makes it write its summary) and waits for it to end. */
async function detach(strace: ChildProcess): Promise<void> {
  if (strace.exitCode !== null || strace.signalCode !== null) return;
  const exited = once(strace, "exit");
  strace.kill("SIGINT");
  await exited;
}

async function measure(label: GatewayLabel): Promise<{ label: GatewayLabel; answered: number; calls: Map<string, number> }> {
  const gateway = await startGateway(label, { modelReplies: CHATS * MESSAGES + 100 });
  const summary = join(tempDir(`strace-${label}`), "summary.txt");
  const strace = spawn("strace", ["-f", "-c", "-o", summary, "-p", String(gateway.pid)], { stdio: ["ignore", "ignore", "pipe"] });
  try {
    await attached(strace);
    const burst = await closedLoop(gateway, CHATS, MESSAGES);
    await detach(strace);
    return { label, answered: burst.answered, calls: parseSummary(readFileSync(summary, "utf8")) };
  } finally {
    await detach(strace);
    await gateway.stop();
  }
}

printMachine();
const passed = passedThroughText();
console.log(`${CHATS} private chats x ${MESSAGES} messages under strace -f -c, closed loop per chat${passed ? `; passed to both: ${passed}` : ""}`);
for (const label of gatewaysToRun(["bub", "floor"])) {
  const { answered, calls } = await measure(label);
  const per = (count: number) => count / Math.max(answered, 1);
  const total = [...calls].reduce((sum, [name, count]) => (name === "futex" ? sum : sum + count), 0);
  const shown = [...calls].filter(([, count]) => per(count) >= SHOWN_FROM).sort((a, b) => b[1] - a[1]);
  console.log(`${label.padEnd(6)}| ${answered} answered | ${per(total).toFixed(1)} system calls per message besides futex`);
  console.log(`      | ${shown.map(([name, count]) => `${name} ${per(count).toFixed(2)}`).join(", ")}`);
}
