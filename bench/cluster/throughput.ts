// Throughput of N installed `bub gateway` processes serving one bot on one PostgreSQL, for
// N = 1, 2, ... up to the machine's cores, and what each message costs the database.
//
// Each N gets a fresh database and a fresh fake Bot API (support/cluster.ts): N gateways in
// one working folder, tapes in PostgreSQL, one fake model per gateway answering in 20 ms,
// BUB_DEBOUNCE_SECONDS=0, warmed up with 20 x N messages. Workload: the closed loop of
// bench/gateway (N private chats x M messages, each chat sending its next message once the
// previous one is answered; answered / lost / duplicated / order kept). Throughput is
// messages answered / (first message pushed to last answer); scaling is throughput(N) /
// (N x throughput(1)), goal >= 0.8.
//
// Database cost per message, over the burst (+ the gateways' shutdown and 1 s for the
// statistics to be reported): queries (pg Client.query calls, counted in every gateway by
// query-count.ts), transactions and rows written (pg_stat_database), WAL (pg_stat_wal), and
// CPU time of the PostgreSQL process tree (/proc). From those, the projection to 10 machines.
// Where the server's time goes: the statements seen executing in pg_stat_activity, sampled
// every 20 ms from the bench's own connection.
//
// Everything shares this machine: the bench process with its fakes, PostgreSQL and the N
// gateways. CPU is reported for each, so the figures can be read per core.
//
// Run: node bench/cluster/throughput.ts [chats=1000] [messages=5] [max N=cores]
//      BENCH_BUB_BIN=/path/to/prefix/node_modules/.bin/bub node bench/cluster/throughput.ts   (another installed build)
import { cpus, loadavg } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { printMachine } from "../support/processes.ts";
import { cpuMs, intArg, MODEL_MS } from "../gateway/support/gateway.ts";
import { burstSummary, closedLoop, type BurstResult } from "../gateway/support/workload.ts";
import { counterDelta, machineJiffies, startCluster, startDatabase, type DbCounters } from "./support/cluster.ts";

const CORES = cpus().length;
const CHATS = intArg(2, 1000, 10_000);
const MESSAGES = intArg(3, 5, 100);
const MAX_N = intArg(4, CORES, 64);
const SCALING_GOAL = 0.8;
const BIN = process.env.BENCH_BUB_BIN;
/** Long enough for 5,000 messages at 10 a second: a slow run is measured, not cut off. */
const DEADLINE_MS = 600_000;
const SAMPLE_MS = 20;

interface Run {
  n: number;
  burst: BurstResult;
  throughput: number;
  /** Turns (model calls) each gateway ran during the burst. */
  turns: number[];
  gatewayCpuMs: number;
  benchCpuMs: number;
  db: DbCounters;
  queries: number;
  /** Client connections to PostgreSQL at the end of the burst. */
  connections: number;
  /** Share of the machine's CPU time that was busy over the burst, whoever used it (0..1). */
  machineBusy: number;
}

async function measure(n: number, database: Awaited<ReturnType<typeof startDatabase>>): Promise<Run> {
  const total = CHATS * MESSAGES;
  const turns = Array.from({ length: n }, () => 0);
  let counting = false;
  const cluster = await startCluster(database, n, { modelReplies: total + 40 * n + 100, onModelRequest: (index) => counting && turns[index]!++, ...(BIN ? { bin: BIN } : {}) });
  try {
    await sleep(1_000); // the warm-up's tape writes
    const dbBefore = await database.counters();
    const cpuBefore = cluster.gateways.map((gateway) => cpuMs(gateway.pid));
    const benchBefore = process.cpuUsage();
    const machineBefore = machineJiffies();
    cluster.resetQueryCounts();
    const sampled = database.sampleActivity(SAMPLE_MS);
    counting = true;
    const burst = await closedLoop(cluster.target, CHATS, MESSAGES, DEADLINE_MS);
    counting = false;
    const activity = sampled();
    const gatewayCpuMs = cluster.gateways.reduce((sum, gateway, index) => sum + cpuMs(gateway.pid) - cpuBefore[index]!, 0);
    const bench = process.cpuUsage(benchBefore);
    const machine = machineJiffies();
    const machineBusy = (machine.busy - machineBefore.busy) / (machine.total - machineBefore.total);
    const connections = await database.connections();
    await cluster.stop();
    await sleep(1_000);
    const db = counterDelta(dbBefore, await database.counters());
    const counts = cluster.queryCounts();
    if (counts.some((count) => count === null)) throw new Error("a gateway wrote no query count (did it exit cleanly?)");
    const queries = counts.reduce<number>((sum, count) => sum + count!, 0);
    console.log(`N=${n}: statements seen executing in PostgreSQL (pg_stat_activity sampled every ${SAMPLE_MS} ms, ${activity.samples} samples; % of samples):`);
    for (const [text, count] of activity.seen.slice(0, 8)) console.log(`  ${((count / Math.max(activity.samples, 1)) * 100).toFixed(1).padStart(6)}%  ${text}`);
    if (n === MAX_N) {
      console.log(`statements per message answered, N=${n} (query-count.ts, the most frequent):`);
      for (const [text, count] of cluster.topStatements().slice(0, 12)) console.log(`  ${(count / Math.max(burst.answered, 1)).toFixed(2).padStart(6)}  ${text}`);
    }
    return { n, burst, throughput: burst.answered / (burst.wallMs / 1000), turns, gatewayCpuMs, benchCpuMs: (bench.user + bench.system) / 1000, db, queries, connections, machineBusy };
  } finally {
    await cluster.stop();
  }
}

printMachine();
console.log(`load average ${loadavg().map((value) => value.toFixed(2)).join(" ")}; ${CHATS} private chats x ${MESSAGES} messages (closed loop), model answers in ${MODEL_MS} ms; N = 1..${MAX_N} gateways on one embedded PostgreSQL (fsync on)${BIN ? `; bub from ${BIN}` : ""}`);
const database = await startDatabase();
const runs: Run[] = [];
try {
  for (let n = 1; n <= MAX_N; n++) {
    const run = await measure(n, database);
    runs.push(run);
    const one = runs[0]!.throughput;
    const scaling = run.throughput / (n * one);
    const per = (value: number) => (value / Math.max(run.burst.answered, 1)).toFixed(2);
    console.log(`N=${n} | ${burstSummary(run.burst, CHATS * MESSAGES)}`);
    console.log(
      `    | ${run.throughput.toFixed(1)} messages/s = ${scaling.toFixed(2)} x N x one process (goal >= ${SCALING_GOAL}: ${scaling >= SCALING_GOAL ? "met" : "NOT met"}) | turns per gateway ${run.turns.join(" / ")}`,
    );
    console.log(
      `    | per message: gateways CPU ${per(run.gatewayCpuMs)} ms, PostgreSQL CPU ${per(run.db.cpuMs)} ms, bench process CPU ${per(run.benchCpuMs)} ms | ${per(run.queries)} queries, ${per(run.db.xacts)} transactions, ${per(run.db.rowsWritten)} rows written, ${per(run.db.walRecords)} WAL records, ${(run.db.walBytes / Math.max(run.burst.answered, 1) / 1024).toFixed(1)} KiB WAL`,
    );
    console.log(`    | ${run.connections} connections to PostgreSQL (${(run.connections / n).toFixed(1)} per gateway) | machine busy ${(((run.gatewayCpuMs + run.db.cpuMs + run.benchCpuMs) / run.burst.wallMs / CORES) * 100).toFixed(0)}% of ${CORES} cores over the burst (gateways + PostgreSQL + bench); the machine was ${(run.machineBusy * 100).toFixed(0)}% busy in all, other work included`);
  }
} finally {
  await database.stop();
}

// Projection: machines of C cores, one gateway process per core, each as fast as its CPU per
// message allows (G ms, measured above with N = 1), all on one database that costs D ms of
// CPU per message (measured above with the largest N). Assumes the database's CPU per message
// stays what it was here (no lock contention that grows with the number of writers, no disk
// bound: the WAL per message fits the disk's bandwidth) and that network round trips add
// latency but no CPU (they overlap: turns are concurrent).
const one = runs[0]!;
const last = runs.at(-1)!;
const gatewayMs = one.gatewayCpuMs / one.burst.answered;
const dbMs = last.db.cpuMs / last.burst.answered;
const queries = last.queries / last.burst.answered;
const machines = 10;
const demand = (machines * CORES * 1000) / gatewayMs;
console.log(`\nProjection to ${machines} machines of ${CORES} cores (one gateway per core, ${gatewayMs.toFixed(2)} ms of gateway CPU per message, ${dbMs.toFixed(2)} ms of PostgreSQL CPU and ${queries.toFixed(1)} queries per message):`);
console.log(`  the gateways could answer ${demand.toFixed(0)} messages/s; the database would then need ${((demand * dbMs) / 1000).toFixed(1)} cores of CPU and serve ${((demand * queries) / 1000).toFixed(1)}k queries/s`);
console.log(`  one database core keeps up with ${(1000 / dbMs).toFixed(0)} messages/s, the gateways of ${(gatewayMs / dbMs).toFixed(1)} cores`);
