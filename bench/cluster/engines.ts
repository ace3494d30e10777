// The queue engines side by side, in one run, on the workload of throughput.ts: for each
// engine (BUB_QUEUE_ENGINE: graphile-worker, pg-boss; "pg-boss-tuned", a few workers fetching
// batches of 8, existed at commit 23e31db for the comparison in docs/benchmarks.md), N = 1 and 2
// installed `bub gateway` processes on one embedded PostgreSQL (a fresh database each),
// tapes in PostgreSQL; and, as the reference, one gateway without the queue (file tapes, no
// database). Workload: the closed loop of bench/gateway (C chats x M messages, each chat
// sending its next message once the previous one is answered), model answering in 20 ms,
// BUB_DEBOUNCE_SECONDS=0.
//
// Per setup: messages/s (answered / first push to last answer), and against the reference;
// per message (the server checkpointed just before, so no earlier setup's writes are flushed
// during the burst): PostgreSQL CPU (its process tree, /proc), statements (query-count.ts in every
// gateway), transactions and commits (pg_stat_database), WAL flushes (pg_stat_io); latency of each message after the first of
// its chat (its push is the previous answer): update -> turn start (the model request) and
// update -> reply, p50 and p99; the same for the reference, and the difference of the p99
// to turn start (what the queue adds before the turn starts).
//
// With --statements (anywhere among the arguments), PostgreSQL loads pg_stat_statements and
// each queue setup also prints every statement the server ran during the burst: calls,
// execution and planning milliseconds per message answered (the extension and planning
// tracking cost the server some CPU of their own: compare CPU figures of runs without it).
//
// Each queue setup also prints the server's CPU per message by connection name (bub's pools:
// `bub tapes`, `bub queue`, `bub delivery`; live backends only: backends that exited, such
// as autovacuum workers, are in the total but not in the split).
//
// With --pin-database, PostgreSQL runs on the machine's last core and the bench with every
// gateway (the reference's too) on the others, as a database on its own machine: its CPU per
// message is then not inflated by backends waiting for a core the gateways hold.
//
// Run: node bench/cluster/engines.ts [chats=1000] [messages=3] [max N=2] [engines=pg-boss,graphile] [--statements] [--pin-database]
import { execFileSync } from "node:child_process";
import { availableParallelism, loadavg } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { printMachine, quantile } from "../support/processes.ts";
import { answerToken, cpuMs, intArg, MODEL_MS, onSendMessage, startGateway } from "../gateway/support/gateway.ts";
import { burstSummary, closedLoop, type BurstResult, type BurstTarget } from "../gateway/support/workload.ts";
import { counterDelta, startCluster, startDatabase, type StatementCost } from "./support/cluster.ts";

/** Whether `flag` is among the arguments (taken out of them, so the positional ones stay in place). */
function flag(name: string): boolean {
  const index = process.argv.indexOf(name);
  if (index >= 0) process.argv.splice(index, 1);
  return index >= 0;
}
const STATEMENTS = flag("--statements");
const PIN = flag("--pin-database");
/** The machine's cores, read before --pin-database narrows this process to all but the last. */
const CORES = availableParallelism();
const CHATS = intArg(2, 1000, 10_000);
const MESSAGES = intArg(3, 3, 100);
const MAX_N = intArg(4, 2, 8);
const ENGINES = (process.argv[5] ?? "pg-boss,graphile").split(",");
const DEADLINE_MS = 900_000;

interface Figures {
  label: string;
  burst: BurstResult;
  throughput: number;
  gatewayCpuMs: number;
  db?: { cpuMs: number; xacts: number; commits: number; walFsyncs: number; queries: number };
  toTurn: number[];
  toReply: number[];
}

/** Per-message latencies from the model requests and answers seen during a closed loop. */
function latencyRecorder() {
  const answers = new Map<string, number>();
  const turns = new Map<string, number>();
  return {
    onTurn(token: string | undefined, at: number) {
      if (token && !turns.has(token)) turns.set(token, at);
    },
    onAnswer(payload: Record<string, unknown>, at: number) {
      const token = answerToken(payload);
      if (token && !answers.has(token.key)) answers.set(token.key, at);
    },
    clear() {
      answers.clear();
      turns.clear();
    },
    /** For every message but a chat's first: pushed when its predecessor was answered. */
    figures() {
      const toTurn: number[] = [];
      const toReply: number[] = [];
      for (const [key, answered] of answers) {
        const match = /q(\d+)x(\d+)/.exec(key);
        if (!match || Number(match[2]) === 1) continue;
        const pushed = answers.get(`q${match[1]}x${Number(match[2]) - 1}`);
        const turn = turns.get(key);
        if (pushed === undefined) continue;
        toReply.push(answered - pushed);
        if (turn !== undefined) toTurn.push(turn - pushed);
      }
      return { toTurn: toTurn.sort((a, b) => a - b), toReply: toReply.sort((a, b) => a - b) };
    },
  };
}

async function reference(): Promise<Figures> {
  const recorder = latencyRecorder();
  const gateway = await startGateway("bub", { modelReplies: CHATS * MESSAGES + 200, env: { BUB_DEBOUNCE_SECONDS: "0" }, onModelRequest: (token, at) => recorder.onTurn(token, at) });
  try {
    onSendMessage(gateway.telegram, (payload, at) => recorder.onAnswer(payload, at));
    await closedLoop(gateway, 20, 1, 60_000, 900_000); // warm-up, other chats
    recorder.clear();
    const before = cpuMs(gateway.pid);
    const burst = await closedLoop(gateway, CHATS, MESSAGES, DEADLINE_MS);
    return { label: "one gateway, no queue (file tapes)", burst, throughput: burst.answered / (burst.wallMs / 1000), gatewayCpuMs: cpuMs(gateway.pid) - before, ...recorder.figures() };
  } finally {
    await gateway.stop();
  }
}

async function onQueue(database: Awaited<ReturnType<typeof startDatabase>>, engine: string, n: number): Promise<Figures> {
  const recorder = latencyRecorder();
  let counting = false;
  const cluster = await startCluster(database, n, {
    modelReplies: CHATS * MESSAGES + 40 * n + 100,
    env: { BUB_QUEUE_ENGINE: engine },
    onModelRequest: (_index, token, at) => counting && recorder.onTurn(token, at),
  });
  try {
    onSendMessage(cluster.telegram, (payload, at) => counting && recorder.onAnswer(payload, at));
    await sleep(1_000);
    await database.checkpoint();
    const dbBefore = await database.counters();
    const cpuBefore = cluster.gateways.map((gateway) => cpuMs(gateway.pid));
    cluster.resetQueryCounts();
    if (STATEMENTS) await database.resetStatements();
    const splitBefore = await database.cpuByConnection();
    counting = true;
    const target: BurstTarget = cluster.target;
    const burst = await closedLoop(target, CHATS, MESSAGES, DEADLINE_MS);
    counting = false;
    const split = [...(await database.cpuByConnection())].map(([name, ms]) => [name, (ms - (splitBefore.get(name) ?? 0)) / Math.max(burst.answered, 1)] as const);
    const costs = STATEMENTS ? await database.readStatements(cluster.url) : [];
    const gatewayCpuMs = cluster.gateways.reduce((sum, gateway, index) => sum + cpuMs(gateway.pid) - cpuBefore[index]!, 0);
    await cluster.stop();
    await sleep(1_000);
    const db = counterDelta(dbBefore, await database.counters());
    const counts = cluster.queryCounts();
    if (counts.some((count) => count === null)) throw new Error("a gateway wrote no query count (did it exit cleanly?)");
    const queries = counts.reduce<number>((sum, count) => sum + count!, 0);
    console.log(`  ${engine} N=${n}: statements per message answered (the most frequent):`);
    for (const [text, count] of cluster.topStatements().slice(0, STATEMENTS ? 25 : 10)) console.log(`    ${(count / Math.max(burst.answered, 1)).toFixed(2).padStart(6)}  ${text}`);
    if (STATEMENTS) printCosts(costs, burst.answered);
    const shown = split.filter(([, ms]) => ms >= 0.005).sort((a, b) => b[1] - a[1]);
    console.log(`  ${engine} N=${n}: PostgreSQL CPU per message by connection: ${shown.map(([name, ms]) => `${name} ${ms.toFixed(2)} ms`).join(", ")}`);
    return { label: `${engine}, N=${n}`, burst, throughput: burst.answered / (burst.wallMs / 1000), gatewayCpuMs, db: { cpuMs: db.cpuMs, xacts: db.xacts, commits: db.commits, walFsyncs: db.walFsyncs, queries }, ...recorder.figures() };
  } finally {
    await cluster.stop();
  }
}

/** The pg_stat_statements table of one setup, per message answered. */
function printCosts(costs: StatementCost[], answered: number): void {
  const per = Math.max(answered, 1);
  const sum = (pick: (cost: StatementCost) => number) => costs.reduce((total, cost) => total + pick(cost), 0);
  console.log(`  pg_stat_statements, per message answered: ${(sum((c) => c.calls) / per).toFixed(2)} statements, ${(sum((c) => c.execMs) / per).toFixed(3)} ms executing, ${(sum((c) => c.planMs) / per).toFixed(3)} ms planning`);
  console.log("     calls   exec ms   plan ms  plans  statement");
  for (const cost of costs) {
    if (cost.calls / per < 0.005) continue;
    console.log(`    ${(cost.calls / per).toFixed(2).padStart(6)}  ${(cost.execMs / per).toFixed(3).padStart(8)}  ${(cost.planMs / per).toFixed(3).padStart(8)}  ${(cost.plans / per).toFixed(2).padStart(5)}  ${cost.query.slice(0, 150)}`);
  }
}

if (PIN) {
  if (CORES < 2) throw new Error("--pin-database needs at least 2 cores");
  execFileSync("taskset", ["-a", "-cp", `0-${CORES - 2}`, String(process.pid)], { stdio: "ignore" });
}
printMachine();
console.log(`load average ${loadavg().map((value) => value.toFixed(2)).join(" ")}; ${CHATS} private chats x ${MESSAGES} messages (closed loop), model ${MODEL_MS} ms; engines ${ENGINES.join(", ")}; N = 1..${MAX_N}${PIN ? `; PostgreSQL pinned to core ${CORES - 1}, the bench and gateways to the others` : ""}`);
const results: Figures[] = [];
const print = (figures: Figures) => {
  const per = (value: number) => (value / Math.max(figures.burst.answered, 1)).toFixed(2);
  const base = results[0];
  const ratio = base ? ` = ${(figures.throughput / base.throughput).toFixed(2)} x the reference` : "";
  const ms = (values: number[], q: number) => (values.length ? quantile(values, q).toFixed(0) : "-");
  console.log(`${figures.label} | ${burstSummary(figures.burst, CHATS * MESSAGES)}`);
  console.log(`    | ${figures.throughput.toFixed(1)} messages/s${ratio} | gateways CPU ${per(figures.gatewayCpuMs)} ms/msg${figures.db ? ` | PostgreSQL CPU ${per(figures.db.cpuMs)} ms, ${per(figures.db.queries)} statements, ${per(figures.db.xacts)} transactions (${per(figures.db.commits)} commits), ${per(figures.db.walFsyncs)} WAL flushes per message` : ""}`);
  const addedP99 = base && figures !== base ? ` | p99 to turn start minus the reference's: ${(quantile(figures.toTurn, 0.99) - quantile(base.toTurn, 0.99)).toFixed(0)} ms` : "";
  console.log(`    | update -> turn start p50 ${ms(figures.toTurn, 0.5)} ms, p99 ${ms(figures.toTurn, 0.99)} ms; update -> reply p50 ${ms(figures.toReply, 0.5)} ms, p99 ${ms(figures.toReply, 0.99)} ms${addedP99}`);
};
results.push(await reference());
print(results[0]!);
const database = await startDatabase({ statements: STATEMENTS });
if (PIN) await database.pin(String(CORES - 1));
try {
  for (let n = 1; n <= MAX_N; n++) {
    for (const engine of ENGINES) {
      const figures = await onQueue(database, engine, n);
      results.push(figures);
      print(figures);
    }
  }
} finally {
  await database.stop();
}
