/**
 * Opens the shared inbound queue on the engine the `queue.engine` setting names; each
 * engine's library is imported only when it is the one chosen.
 */
import type { ClusterQueueOptions, InboundQueue } from "./inbound-queue.ts";
import type { QueueEngine } from "./schema.ts";

/**
 * Opens (installing or migrating its schema) the inbound queue of `options.source`.
 * @throws BubError `config` for a bad URL or credentials, `temporary` when the server cannot be reached.
 */
export async function openInboundQueue(engine: QueueEngine, options: ClusterQueueOptions): Promise<InboundQueue> {
  if (engine === "pg-boss") return (await import("./queue.ts")).ClusterQueue.open(options);
  return (await import("./graphile.ts")).GraphileQueue.open(options);
}
