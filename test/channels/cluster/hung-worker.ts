/**
 * A gateway process that takes one job of the test queue and then hangs, for a test to kill
 * with SIGKILL mid-turn. Prints `took <job id> <retry count>` once it holds a job.
 * Usage: node hung-worker.ts <database url> <source>
 */
import { ClusterQueue } from "../../../src/channels/cluster/queue.ts";

const [url, source] = process.argv.slice(2);
if (!url || !source) throw new Error("usage: hung-worker.ts <database url> <source>");
const queue = await ClusterQueue.open({ url, source, expireSeconds: 2, heartbeatSeconds: 10 }, false);
await queue.work(
  1,
  (job) => {
    process.stdout.write(`took ${job.id} ${job.retryCount}\n`);
    return new Promise<void>(() => undefined);
  },
  async () => undefined,
);
