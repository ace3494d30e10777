/**
 * A gateway process that takes one job of the test queue and then hangs, for a test to kill
 * with SIGKILL mid-turn. Prints `took <job id> <retry count>` once it holds a job.
 * Usage: node hung-worker.ts <database url> <source> [pg-boss|graphile]
 */
import { ClusterQueue } from "../../../src/channels/cluster/queue.ts";
import { GraphileQueue } from "../../../src/channels/cluster/graphile.ts";

const [url, source, engine = "pg-boss"] = process.argv.slice(2);
if (!url || !source) throw new Error("usage: hung-worker.ts <database url> <source> [pg-boss|graphile]");
const options = { url, source, expireSeconds: 2, heartbeatSeconds: engine === "graphile" ? 2 : 10 };
// pg-boss: no supervision here (the test's own queue expires the job).
const queue = engine === "graphile" ? await GraphileQueue.open(options) : await ClusterQueue.open(options, false);
await queue.work(
  4,
  (job) => {
    process.stdout.write(`took ${job.id} ${job.retryCount}\n`);
    return new Promise<void>(() => undefined);
  },
  async () => undefined,
);
