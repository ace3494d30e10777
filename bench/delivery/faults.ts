// The delivery ledger under load with failing sends (issue 36): the installed `bub gateway`
// (packed and installed as users get it, file tapes, SQLite ledger) answers N private chats
// x M messages, closed loop per chat (bench/gateway/support/workload.ts), while the fake Bot
// API fails `rate` of the sendMessage calls retryably at random, seeded (half 502, half 429
// with retry_after 1 s; test/support/fake-telegram-faults.ts). Every failed call is left to
// the ledger's retries (BUB_DELIVERY_BACKOFF_SECONDS, default here 0.2 s).
//
// Checked: every message answered exactly once (a failed call delivers nothing, so the bound
// on repeats for these faults is 0), the answers of each chat in order, and after the run the
// ledger empty (no pending record, no dead letter). Measured: bub's CPU per message, with the
// faults and, in the same invocation, without (`rate` 0): the difference is what the retries
// cost; the ledger's own cost per message is bench/delivery/ledger.ts.
//
// Run: node bench/delivery/faults.ts [chats=1000] [messages=5] [rate=0.1] [seed=36]
//      e.g. node bench/delivery/faults.ts 200 5 0.1 36
import { DatabaseSync } from "node:sqlite";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { printMachine } from "../support/processes.ts";
import { cpuMs, intArg, MODEL_MS, passedThroughText, peakKiB, startGateway, warmUp } from "../gateway/support/gateway.ts";
import { burstSummary, closedLoop, type BurstResult } from "../gateway/support/workload.ts";

const CHATS = intArg(2, 1000, 10_000);
const MESSAGES = intArg(3, 5, 100);
const RATE = Number(process.argv[4] ?? 0.1);
const SEED = Number(process.argv[5] ?? 36);
if (!(RATE >= 0 && RATE < 1)) throw new Error(`rate must be from 0 to below 1, got ${process.argv[4]}`);
const DEADLINE_MS = Math.max(180_000, CHATS * MESSAGES * 120);

interface Result extends BurstResult {
  rate: number;
  cpuPerMessageMs: number;
  peakKiB: number;
  injected: { 429: number; 502: number };
  ledger: Record<string, number>;
  exitCode: number | null;
}

/** Rows left in the SQLite ledger, by state (read after the gateway stopped). */
function ledgerRows(home: string): Record<string, number> {
  const path = join(home, ".bub", "delivery.sqlite3");
  if (!existsSync(path)) return { missing: 1 };
  const database = new DatabaseSync(path, { readOnly: true });
  try {
    const rows = database.prepare("SELECT state, count(*) AS n FROM deliveries GROUP BY state").all();
    return Object.fromEntries(rows.map((row) => [String(row.state), Number(row.n)]));
  } finally {
    database.close();
  }
}

async function measure(rate: number): Promise<Result> {
  const gateway = await startGateway("bub", { modelReplies: CHATS * MESSAGES + 100, env: { BUB_DELIVERY_BACKOFF_SECONDS: process.env.BUB_DELIVERY_BACKOFF_SECONDS ?? "0.2" } });
  try {
    await warmUp(gateway, 5);
    gateway.telegram.randomFaults({ methods: ["sendMessage"], rate, seed: SEED });
    const cpuStart = cpuMs(gateway.pid);
    const burst = await closedLoop(gateway, CHATS, MESSAGES, DEADLINE_MS);
    const cpu = cpuMs(gateway.pid) - cpuStart;
    const peak = peakKiB(gateway.pid);
    const injected = gateway.telegram.injectedFaults;
    const exitCode = await gateway.stop();
    return { rate, ...burst, cpuPerMessageMs: cpu / Math.max(burst.answered, 1), peakKiB: peak, injected, ledger: ledgerRows(gateway.home), exitCode };
  } finally {
    if (!gateway.exited()) gateway.child.kill("SIGKILL");
  }
}

function row(result: Result): string {
  const left = Object.entries(result.ledger).map(([state, count]) => `${state} ${count}`).join(", ") || "empty";
  return [
    `rate ${result.rate}`,
    burstSummary(result, CHATS * MESSAGES),
    `failed calls ${result.failedCalls} (injected 502: ${result.injected[502]}, 429: ${result.injected[429]})`,
    `CPU ${result.cpuPerMessageMs.toFixed(3)} ms/msg`,
    `peak RSS ${(result.peakKiB / 1024).toFixed(1)} MiB`,
    `ledger after: ${left}`,
    `exit ${result.exitCode}`,
  ].join(" | ");
}

printMachine();
const passed = passedThroughText();
console.log(`${CHATS} private chats x ${MESSAGES} messages, closed loop per chat, model answers in ${MODEL_MS} ms, sendMessage failing at random (seed ${SEED})${passed ? `; passed: ${passed}` : ""}`);
const results: Result[] = [];
for (const rate of RATE > 0 ? [RATE, 0] : [0]) {
  const result = await measure(rate);
  results.push(result);
  console.log(row(result));
}
const total = CHATS * MESSAGES;
const ok = results.every((result) => result.answered === total && result.lost === 0 && result.duplicated === 0 && result.outOfOrder === 0 && Object.keys(result.ledger).length === 0);
const [faulty, clean] = results;
if (faulty && clean) console.log(`CPU per message with faults / without: ${(faulty.cpuPerMessageMs / clean.cpuPerMessageMs).toFixed(2)}x; wall ${(faulty.wallMs / 1000).toFixed(1)} s / ${(clean.wallMs / 1000).toFixed(1)} s`);
console.log(ok ? "every message answered once, in order; the ledger is empty" : "NOT every message answered once and in order, or the ledger kept records");
if (!ok) process.exitCode = 1;
