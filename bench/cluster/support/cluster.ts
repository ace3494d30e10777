/**
 * What the cluster benches share (throughput.ts, kill.ts, latency.ts): one real PostgreSQL
 * (the embedded server of test/support/postgres.ts, crash safety on, loopback TCP), and N
 * installed `bub gateway` processes serving ONE bot of one fake Telegram Bot API, all in the
 * same working folder (so they share sessions) with tapes in PostgreSQL, each with its own
 * BUB_HOME (as on separate machines) and its own fake model (so the bench sees which process
 * ran which turn). Gateways are started by bench/gateway/support/gateway.ts, with
 * `BUB_DEBOUNCE_SECONDS=0` (one turn per message) and the query-count.ts preload.
 *
 * Also readers of the database's cost: the CPU time of the server's process tree (the
 * postmaster and its backends, from /proc; backends that exited are in the postmaster's
 * cutime/cstime once reaped), and pg_stat_database / pg_stat_wal / pg_stat_io counters.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { startFakeTelegram, type FakeTelegram } from "../../../test/support/fake-telegram.ts";
import { startPostgres, type PostgresServer } from "../../../test/support/postgres.ts";
import { tempDir } from "../../support/processes.ts";
import { startGateway, TOKEN, warmUp, type RunningGateway } from "../../gateway/support/gateway.ts";
import type { BurstTarget } from "../../gateway/support/workload.ts";

const CLK_TCK = 100; // Linux USER_HZ
const QUERY_COUNT = fileURLToPath(new URL("../query-count.ts", import.meta.url));

/** Counters of the whole server (every database), see {@link Database.counters}. */
export interface DbCounters {
  /** Transactions committed or rolled back. */
  xacts: number;
  /** Transactions committed (read-only ones too: those flush no WAL). */
  commits: number;
  /** WAL flushes to disk (fsync/fdatasync of the WAL, pg_stat_io): commits of the same moment share one. */
  walFsyncs: number;
  /** Rows inserted, updated, deleted. */
  rowsWritten: number;
  /** WAL records and bytes written. */
  walRecords: number;
  walBytes: number;
  /** CPU time of the server's process tree so far, in ms. */
  cpuMs: number;
}

/** The embedded server the cluster benches run on. */
export interface Database {
  readonly server: PostgresServer;
  /** A fresh, empty database (one per scenario, so tapes and queues start empty). */
  create(): Promise<string>;
  counters(): Promise<DbCounters>;
  /** Client connections open right now (this bench's own one left out). */
  connections(): Promise<number>;
  /**
   * Writes every dirty page out now (`CHECKPOINT`), so that what an earlier setup wrote is
   * not flushed, and charged, during the next setup's burst.
   */
  checkpoint(): Promise<void>;
  /**
   * CPU ms so far of each live backend, summed by its `application_name` (background
   * workers by their type); subtract two readings to see which of bub's pools a burst cost.
   */
  cpuByConnection(): Promise<Map<string, number>>;
  /**
   * Pins the server (the postmaster, so every backend it starts later, and every process it
   * has started) to `cpus` (a `taskset` list such as "1"), as a database on its own machine.
   */
  pin(cpus: string): Promise<void>;
  /**
   * Samples pg_stat_activity every `everyMs` until the returned function is called, which
   * answers how often each statement (its first 100 characters) was seen executing: where
   * the server's time goes (pg_stat_statements would need a server restart to load).
   */
  sampleActivity(everyMs: number): () => { samples: number; seen: [string, number][] };
  /** With `statements` on: forgets what pg_stat_statements gathered so far (every database). */
  resetStatements(): Promise<void>;
  /** With `statements` on: what each statement ran in the database of `url` since the reset, most calls first. */
  readStatements(url: string): Promise<StatementCost[]>;
  stop(): Promise<void>;
}

/** One normalized statement as pg_stat_statements saw it. */
export interface StatementCost {
  query: string;
  calls: number;
  /** Milliseconds spent executing and planning it, over all calls. */
  execMs: number;
  planMs: number;
  plans: number;
}

/** utime + stime + cutime + cstime of a process from /proc/<pid>/stat, in ms, and its parent pid. */
function procTimes(pid: number): { ppid: number; ownMs: number; childrenMs: number } | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null; // gone
  }
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // from #3 (state) on
  const ms = (index: number) => (Number(fields[index]) * 1000) / CLK_TCK;
  return { ppid: Number(fields[1]), ownMs: ms(11) + ms(12), childrenMs: ms(13) + ms(14) };
}

/** CPU ms of `root` and every direct child of it (a postmaster's backends and workers). */
export function treeCpuMs(root: number): number {
  const self = procTimes(root);
  if (!self) throw new Error(`process ${root} is gone`);
  let total = self.ownMs + self.childrenMs;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const child = procTimes(Number(name));
    if (child?.ppid === root) total += child.ownMs + child.childrenMs;
  }
  return total;
}

/** Jiffies of the whole machine from /proc/stat: busy (all but idle and iowait) and total. */
export function machineJiffies(): { busy: number; total: number } {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = fields.reduce((sum, value) => sum + value, 0);
  return { busy: total - fields[3]! - fields[4]!, total };
}

/**
 * Starts the embedded PostgreSQL with fsync and synchronous commit on (as a real deployment);
 * with `statements`, pg_stat_statements is loaded too (it costs the server a little CPU of its own).
 */
export async function startDatabase(options: { statements?: boolean } = {}): Promise<Database> {
  const server = await startPostgres({ durable: true, statements: options.statements === true });
  const admin = new pg.Client({ connectionString: server.url() });
  await admin.connect();
  if (options.statements) await admin.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  const { rows } = await admin.query<{ setting: string }>("SELECT setting FROM pg_settings WHERE name = 'data_directory'");
  const sampler = new pg.Client({ connectionString: server.url() });
  await sampler.connect();
  const postmaster = Number(readFileSync(join(rows[0]!.setting, "postmaster.pid"), "utf8").split("\n")[0]);
  return {
    server,
    create: () => server.createDatabase("bub_cluster"),
    async counters() {
      // Backends report their statistics when idle, at most about once a second.
      const stats = await admin.query<{ xacts: string; commits: string; fsyncs: string; rows: string; records: string; bytes: string }>(
        `SELECT (SELECT sum(xact_commit + xact_rollback) FROM pg_stat_database) AS xacts,
                (SELECT sum(xact_commit) FROM pg_stat_database) AS commits,
                (SELECT coalesce(sum(fsyncs), 0) FROM pg_stat_io WHERE object = 'wal') AS fsyncs,
                (SELECT sum(tup_inserted + tup_updated + tup_deleted) FROM pg_stat_database) AS rows,
                wal_records AS records, wal_bytes AS bytes
           FROM pg_stat_wal`,
      );
      const row = stats.rows[0]!;
      return { xacts: Number(row.xacts), commits: Number(row.commits), walFsyncs: Number(row.fsyncs), rowsWritten: Number(row.rows), walRecords: Number(row.records), walBytes: Number(row.bytes), cpuMs: treeCpuMs(postmaster) };
    },
    sampleActivity(everyMs) {
      const seen = new Map<string, number>();
      let samples = 0;
      let busy = false;
      const timer = setInterval(() => {
        if (busy) return;
        busy = true;
        sampler
          .query<{ query: string }>("SELECT query FROM pg_stat_activity WHERE state = 'active' AND backend_type = 'client backend' AND pid <> pg_backend_pid()")
          .then(({ rows }) => {
            samples++;
            for (const row of rows) {
              const key = row.query.replace(/\s+/g, " ").trim().slice(0, 100);
              seen.set(key, (seen.get(key) ?? 0) + 1);
            }
          })
          .catch(() => undefined)
          .finally(() => (busy = false));
      }, everyMs);
      return () => {
        clearInterval(timer);
        return { samples, seen: [...seen].sort((a, b) => b[1] - a[1]) };
      };
    },
    async resetStatements() {
      if (!options.statements) throw new Error("startDatabase({ statements: true }) loads pg_stat_statements");
      await admin.query("SELECT pg_stat_statements_reset()");
    },
    async readStatements(url) {
      if (!options.statements) throw new Error("startDatabase({ statements: true }) loads pg_stat_statements");
      const { rows } = await admin.query<{ query: string; calls: string; exec: number; plan: number; plans: string }>(
        `SELECT query, calls, total_exec_time AS exec, total_plan_time AS plan, plans
           FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1) ORDER BY calls DESC, total_exec_time DESC`,
        [new URL(url).pathname.slice(1)],
      );
      return rows.map((row) => ({ query: row.query.replace(/\s+/g, " ").trim(), calls: Number(row.calls), execMs: row.exec, planMs: row.plan, plans: Number(row.plans) }));
    },
    async connections() {
      const { rows } = await admin.query<{ count: string }>("SELECT count(*) AS count FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()");
      return Number(rows[0]!.count);
    },
    async checkpoint() {
      await admin.query("CHECKPOINT");
    },
    async cpuByConnection() {
      const { rows } = await admin.query<{ pid: number; name: string }>(
        "SELECT pid, CASE WHEN backend_type = 'client backend' THEN coalesce(nullif(application_name, ''), '(unnamed)') ELSE backend_type END AS name FROM pg_stat_activity WHERE pid <> pg_backend_pid()",
      );
      const byName = new Map<string, number>();
      for (const row of rows) {
        const times = procTimes(row.pid);
        if (times) byName.set(row.name, (byName.get(row.name) ?? 0) + times.ownMs);
      }
      return byName;
    },
    async pin(cpus) {
      const { rows } = await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity");
      for (const pid of [postmaster, ...rows.map((row) => row.pid)]) execFileSync("taskset", ["-a", "-cp", cpus, String(pid)], { stdio: "ignore" });
    },
    async stop() {
      await sampler.end();
      await admin.end();
      await server.stop();
    },
  };
}

/** The difference of two counter readings. */
export function counterDelta(before: DbCounters, after: DbCounters): DbCounters {
  return {
    xacts: after.xacts - before.xacts,
    commits: after.commits - before.commits,
    walFsyncs: after.walFsyncs - before.walFsyncs,
    rowsWritten: after.rowsWritten - before.rowsWritten,
    walRecords: after.walRecords - before.walRecords,
    walBytes: after.walBytes - before.walBytes,
    cpuMs: after.cpuMs - before.cpuMs,
  };
}

/** What query-count.ts wrote, or null. */
function readCount(file: string): { queries: number; statements: Record<string, number> } | null {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as { queries: number; statements: Record<string, number> };
  } catch {
    return null;
  }
}

/** N gateways on one bot; see the module comment. */
export interface Cluster {
  readonly url: string;
  readonly telegram: FakeTelegram;
  readonly gateways: readonly RunningGateway[];
  /** The burst target: fails when a gateway the bench did not kill has exited. */
  readonly target: BurstTarget;
  /** Index of the gateway whose log file last says it was elected poller, if any. */
  poller(): number | undefined;
  /** The same, with when it logged that (epoch ms). */
  election(): { index: number; at: number } | undefined;
  /** kill -9 of one gateway; returns the `performance.now()` at which the signal was sent. */
  kill9(index: number): number;
  /** SIGUSR2 to every live gateway: query-count.ts starts counting from here. */
  resetQueryCounts(): void;
  /** Queries per gateway since the reset (read after {@link stop}; null for a killed one). */
  queryCounts(): (number | null)[];
  /** The most frequent statements over all gateways since the reset, with their counts (after {@link stop}). */
  topStatements(): [string, number][];
  stop(): Promise<void>;
}

/** Options of {@link startCluster}. */
export interface ClusterOptions {
  /** Model answers scripted per gateway (each may run every message). */
  modelReplies: number;
  /** Added to every gateway's environment. */
  env?: Record<string, string>;
  /** Every model request of gateway `index`: the token it names and when it arrived. */
  onModelRequest?: (index: number, token: string | undefined, at: number) => void;
  /** Private chats to warm the cluster up with (one message each), default 20 per gateway. */
  warmUpChats?: number;
  /** Another installed `bub` to run (a build to compare with); default this checkout's. */
  bin?: string;
}

/** Starts `count` gateways on a fresh database and a fresh bot, warmed up. */
export async function startCluster(database: Database, count: number, options: ClusterOptions): Promise<Cluster> {
  const url = await database.create();
  const telegram = await startFakeTelegram({ token: TOKEN });
  const workspace = tempDir("workspace");
  const countFiles = Array.from({ length: count }, (_, index) => join(tempDir(`queries-${index}`), "count.json"));
  const killed = new Set<number>();
  const settled = await Promise.allSettled(
    countFiles.map((file, index) =>
      startGateway("bub", {
        modelReplies: options.modelReplies,
        telegram,
        cwd: workspace,
        ...(options.bin ? { bin: options.bin } : {}),
        onModelRequest: (token, at) => options.onModelRequest?.(index, token, at),
        env: {
          BUB_TAPE_STORE: "postgres",
          BUB_DATABASE_URL: url,
          BUB_DEBOUNCE_SECONDS: "0",
          NODE_OPTIONS: `--import ${QUERY_COUNT}`,
          BENCH_QUERY_COUNT_FILE: file,
          ...options.env,
        },
      }),
    ),
  );
  const gateways = settled.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
  const failed = settled.find((result) => result.status === "rejected");
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await Promise.all(gateways.map((gateway) => gateway.stop()));
      await telegram.close();
    })());
  if (failed) {
    await stop();
    throw failed.reason;
  }
  const broken = () => gateways.findIndex((gateway, index) => !killed.has(index) && gateway.exited());
  const cluster: Cluster = {
    url,
    telegram,
    gateways,
    target: {
      telegram,
      exited: () => broken() >= 0,
      assertRunning(when) {
        const index = broken();
        if (index >= 0) throw new Error(`gateway ${index} exited ${when}:\n${gateways[index]!.output()}`);
      },
    },
    poller: () => cluster.election()?.index,
    election() {
      let best: { index: number; at: string } | undefined;
      gateways.forEach((gateway, index) => {
        if (killed.has(index)) return;
        let log = "";
        try {
          log = readFileSync(join(gateway.home, ".bub", "logs", "bub.log"), "utf8");
        } catch {
          return;
        }
        const at = [...log.matchAll(/^(\S+) INFO bub:telegram telegram\.poller elected/gm)].at(-1)?.[1];
        if (at && (!best || at > best.at)) best = { index, at };
      });
      return best && { index: best.index, at: Date.parse(best.at) };
    },
    kill9(index) {
      killed.add(index);
      const at = performance.now();
      gateways[index]!.child.kill("SIGKILL");
      return at;
    },
    resetQueryCounts() {
      gateways.forEach((gateway, index) => !killed.has(index) && !gateway.exited() && gateway.child.kill("SIGUSR2"));
    },
    queryCounts: () => countFiles.map((file, index) => (killed.has(index) ? null : (readCount(file)?.queries ?? null))),
    topStatements() {
      const sum = new Map<string, number>();
      for (const file of countFiles) for (const [text, count] of Object.entries(readCount(file)?.statements ?? {})) sum.set(text, (sum.get(text) ?? 0) + count);
      return [...sum].sort((a, b) => b[1] - a[1]);
    },
    stop,
  };
  try {
    // A poller elected (all gateways have started, the rest stand by), then every gateway warm.
    for (let waited = 0; cluster.poller() === undefined; waited += 50) {
      if (waited > 30_000) throw new Error(`no gateway was elected poller within 30 s:\n${gateways.map((gateway) => gateway.output()).join("\n")}`);
      cluster.target.assertRunning("before a poller was elected");
      await sleep(50);
    }
    await warmUp(gateways[0]!, options.warmUpChats ?? 20 * count);
  } catch (error) {
    await stop();
    throw error;
  }
  return cluster;
}
