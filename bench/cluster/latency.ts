// What the shared inbound queue adds to a message's latency: a steady load of R messages a
// second over C private chats for S seconds (open loop, bench/gateway's steadyLoad), model
// answering in 20 ms, BUB_DEBOUNCE_SECONDS=0, on the installed package, in these setups:
//   file        one gateway, file tapes, no database (no queue: the update goes from the
//               inbound journal straight to its turn);
//   file+queue  the same with BUB_DATABASE_URL set: every update goes through the queue
//               (the default engine, graphile-worker), tapes stay in files. Against `file`,
//               this is the queue alone; `file+queue pg-boss` the same on pg-boss;
//   pg+queue x1 one gateway, tapes in PostgreSQL, the queue (support/cluster.ts);
//   pg+queue x2 two gateways on the same database and bot: the poller queues, either runs;
//   pg no-queue only with BENCH_BASELINE_BIN=<an installed bub of a build before the queue>:
//               one gateway with tapes in PostgreSQL and the elected poller, no queue.
// Setups take turns, one after the other in each round (the first rotating), each on a fresh
// database and bot; figures pool the rounds.
//
// Per message, from the fake servers: update -> turn start (the update pushed to the fake
// Bot API, whose waiting getUpdates answers at once, to the turn's model request read by the
// fake model) and update -> reply (to the sendMessage received). The queue's added p99 is
// p99(update -> turn start) of file+queue minus that of file (same tapes, same process), and
// of pg+queue x1 minus pg no-queue when that baseline is given. For the queue setups also
// the time split by pg-boss's timestamps of each job (created_on, started_on; the database
// runs on this machine, so its clock is the bench's): update -> job created (polled and
// queued), created -> started (waiting in pg-boss), started -> the turn's model request.
//
// Run: node bench/cluster/latency.ts [rate=50] [seconds=20] [chats=200] [rounds=2]
import { loadavg } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { printMachine, quantile } from "../support/processes.ts";
import { answerToken, intArg, MODEL_MS, onSendMessage, passedThroughText, startGateway, warmUp } from "../gateway/support/gateway.ts";
import { steadyLoad, type BurstTarget } from "../gateway/support/workload.ts";
import { startCluster, startDatabase, type Database } from "./support/cluster.ts";

const RATE = intArg(2, 50, 2000);
const SECONDS = intArg(3, 20, 3600);
const CHATS = intArg(4, 200, 100_000);
const ROUNDS = intArg(5, 2, 20);
const BASELINE_BIN = process.env.BENCH_BASELINE_BIN;
const GOAL_MS = 20;

/** A running setup: where to push, and how to stop it. */
interface Running {
  target: BurstTarget;
  /** Per token, when pg-boss created and started its job (epoch ms), for jobs created since `since` (a database timestamp). */
  jobTimes?: (since: string) => Promise<Map<string, { created: number; started: number }>>;
  /** The database's clock, when there is one. */
  now?: () => Promise<string>;
  stop(): Promise<void>;
}

interface Setup {
  label: string;
  start(onModelRequest: (token: string | undefined, at: number) => void): Promise<Running>;
}

async function onDatabase(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    client,
    now: async () => (await client.query<{ now: string }>("SELECT clock_timestamp()::text AS now")).rows[0]!.now,
    async jobTimes(since: string) {
      // pg-boss's timestamps (BUB_QUEUE_ENGINE=pg-boss); graphile-worker deletes a job once done.
      const present = await client.query<{ present: boolean }>("SELECT to_regclass('pgboss.job') IS NOT NULL AS present");
      if (!present.rows[0]?.present) return new Map<string, { created: number; started: number }>();
      const { rows } = await client.query<{ text: string; created: string; started: string }>(
        `SELECT data->'item'->'message'->>'text' AS text, extract(epoch FROM created_on) * 1000 AS created, extract(epoch FROM started_on) * 1000 AS started
           FROM pgboss.job WHERE name NOT LIKE '%_dead' AND created_on >= $1::timestamptz AND started_on IS NOT NULL`,
        [since],
      );
      const times = new Map<string, { created: number; started: number }>();
      for (const row of rows) {
        const token = /q\d+x\d+/.exec(row.text ?? "")?.[0];
        if (token) times.set(token, { created: Number(row.created), started: Number(row.started) });
      }
      return times;
    },
  };
}

function clusterSetup(database: Database, label: string, n: number, options: { env?: Record<string, string>; bin?: string; queue?: boolean } = {}): Setup {
  const queue = options.queue ?? true;
  return {
    label,
    async start(onModelRequest) {
      const cluster = await startCluster(database, n, {
        modelReplies: RATE * SECONDS + 40 * n + 100,
        onModelRequest: (_, token, at) => onModelRequest(token, at),
        ...(options.env ? { env: options.env } : {}),
        ...(options.bin ? { bin: options.bin } : {}),
      });
      const db = await onDatabase(cluster.url);
      return {
        target: cluster.target,
        now: db.now,
        ...(queue ? { jobTimes: db.jobTimes } : {}),
        async stop() {
          await db.client.end();
          await cluster.stop();
        },
      };
    },
  };
}

const fileSetup: Setup = {
  label: "file",
  async start(onModelRequest) {
    const gateway = await startGateway("bub", { modelReplies: RATE * SECONDS + 100, onModelRequest, env: { BUB_DEBOUNCE_SECONDS: "0" } });
    await warmUp(gateway, 20);
    return { target: gateway, stop: async () => void (await gateway.stop()) };
  },
};

interface Samples {
  turn: number[];
  reply: number[];
  /** With the queue: update pushed -> job created (polled and queued), job created -> started (pg-boss), started -> turn's model request. */
  accept: number[];
  wait: number[];
  handOver: number[];
  lost: number;
}

async function measure(setup: Setup, samples: Samples): Promise<void> {
  const pushedAt = new Map<string, number>();
  const turnAt = new Map<string, number>();
  const replyAt = new Map<string, number>();
  const running = await setup.start((token, at) => token && pushedAt.has(token) && !turnAt.has(token) && turnAt.set(token, at));
  try {
    await sleep(1_000);
    onSendMessage(running.target.telegram, (payload, at) => {
      const token = answerToken(payload);
      if (token && pushedAt.has(token.key) && !replyAt.has(token.key)) replyAt.set(token.key, at);
    });
    const since = await running.now?.();
    await steadyLoad(running.target, { rate: RATE, seconds: SECONDS, chats: CHATS }, pushedAt);
    const deadline = performance.now() + 30_000;
    while (replyAt.size < pushedAt.size && performance.now() < deadline) await sleep(10);
    for (const [token, pushed] of pushedAt) {
      const turn = turnAt.get(token);
      const reply = replyAt.get(token);
      if (turn !== undefined) samples.turn.push(turn - pushed);
      if (reply !== undefined) samples.reply.push(reply - pushed);
      else samples.lost++;
    }
    // On the same machine the database's clock is this process's: performance.timeOrigin + t is epoch ms.
    const epoch = (at: number) => performance.timeOrigin + at;
    for (const [token, job] of since && running.jobTimes ? await running.jobTimes(since) : []) {
      const pushed = pushedAt.get(token);
      const turn = turnAt.get(token);
      if (pushed === undefined || turn === undefined) continue;
      samples.accept.push(job.created - epoch(pushed));
      samples.wait.push(job.started - job.created);
      samples.handOver.push(epoch(turn) - job.started);
    }
  } finally {
    await running.stop();
  }
}

const figures = (values: number[]) => `p50 ${quantile(values, 0.5).toFixed(1)} p90 ${quantile(values, 0.9).toFixed(1)} p99 ${quantile(values, 0.99).toFixed(1)} max ${quantile(values, 1).toFixed(1)} ms`;

printMachine();
const passed = passedThroughText();
console.log(
  `load average ${loadavg().map((value) => value.toFixed(2)).join(" ")}; steady ${RATE} messages/s for ${SECONDS} s over ${CHATS} private chats, model ${MODEL_MS} ms, BUB_DEBOUNCE_SECONDS=0, ${ROUNDS} rounds${passed ? `; ${passed}` : ""}`,
);
const database = await startDatabase();
const setups: Setup[] = [
  fileSetup,
  clusterSetup(database, "file+queue", 1, { env: { BUB_TAPE_STORE: "file" } }),
  clusterSetup(database, "file+queue pg-boss", 1, { env: { BUB_TAPE_STORE: "file", BUB_QUEUE_ENGINE: "pg-boss" } }),
  clusterSetup(database, "pg+queue x1", 1),
  clusterSetup(database, "pg+queue x2", 2),
];
if (BASELINE_BIN) setups.push(clusterSetup(database, "pg no-queue", 1, { bin: BASELINE_BIN, queue: false }));
const results = new Map<string, Samples>(setups.map((setup) => [setup.label, { turn: [], reply: [], accept: [], wait: [], handOver: [], lost: 0 }]));
try {
  for (let round = 0; round < ROUNDS; round++)
    for (let offset = 0; offset < setups.length; offset++) {
      const setup = setups[(round + offset) % setups.length]!;
      await measure(setup, results.get(setup.label)!);
    }
} finally {
  await database.stop();
}
for (const [label, samples] of results) {
  console.log(`${label.padEnd(11)}| ${samples.reply.length} answered, lost ${samples.lost} | update -> turn start ${figures(samples.turn)} | update -> reply ${figures(samples.reply)}`);
  if (samples.wait.length > 0) {
    const pad = " ".repeat(11);
    console.log(`${pad}| over ${samples.wait.length} jobs: update -> job created (polled, queued) ${figures(samples.accept)}`);
    console.log(`${pad}| job created -> started (pg-boss: started_on - created_on) ${figures(samples.wait)}`);
    console.log(`${pad}| job started -> turn's model request ${figures(samples.handOver)}`);
  }
}
const p99 = (label: string) => quantile(results.get(label)!.turn, 0.99);
const pairs: [string, string][] = [["file+queue", "file"], ["file+queue pg-boss", "file"], ["pg+queue x2", "pg+queue x1"]];
if (BASELINE_BIN) pairs.push(["pg+queue x1", "pg no-queue"]);
for (const [label, baseline] of pairs) {
  const added = p99(label) - p99(baseline);
  const goal = label === "pg+queue x2" ? "" : ` (goal <= ${GOAL_MS}: ${added <= GOAL_MS ? "met" : "NOT met"})`;
  console.log(`p99 update -> turn start, ${label} - ${baseline}: ${added.toFixed(1)} ms${goal}`);
}
