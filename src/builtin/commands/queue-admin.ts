/** `bub queue list` and `bub queue retry`: see ./queue.ts. */
import type { Writable } from "node:stream";
import { openQueueAdmin, type QueueAdmin } from "../../channels/cluster/admin.ts";
import { clusterDatabaseUrl } from "../../channels/cluster/settings.ts";
import { BubError } from "../../kernel/errors.ts";
import type { BubFramework } from "../../kernel/framework.ts";

async function withAdmin<T>(framework: BubFramework, body: (admin: QueueAdmin) => Promise<T>): Promise<T> {
  await framework.settings.prepare();
  const admin = await openQueueAdmin(clusterDatabaseUrl(framework.settings));
  try {
    return await body(admin);
  } finally {
    await admin.close();
  }
}

/** Prints each bot's queue counts and the dead letters (or one JSON object with `--json`). */
export async function runQueueList(framework: BubFramework, options: { json?: boolean }, out: Writable): Promise<void> {
  const { counts, letters } = await withAdmin(framework, async (admin) => ({ counts: await admin.counts(), letters: await admin.deadLetters() }));
  if (options.json) {
    const dead_letters = letters.map((letter) => ({ id: letter.id, queue: letter.queue, session_id: letter.session, message: letter.key, failed_at: letter.failedAt.toISOString() }));
    out.write(`${JSON.stringify({ queues: counts.map(({ queue, queued, active, deadLetters }) => ({ queue, queued, active, dead_letters: deadLetters })), dead_letters }, null, 2)}\n`);
    return;
  }
  if (counts.length === 0) {
    out.write("No inbound queue yet: it is created when a gateway with BUB_DATABASE_URL starts.\n");
    return;
  }
  out.write(table(["QUEUE", "QUEUED", "RUNNING", "DEAD LETTERS"], counts.map((row) => [row.queue, String(row.queued), String(row.active), String(row.deadLetters)])));
  if (letters.length === 0) return;
  out.write("\nDead letters (bub queue retry ID, or --all):\n");
  out.write(table(["ID", "SESSION", "MESSAGE", "FAILED"], letters.map((letter) => [letter.id, letter.session, letter.key, letter.failedAt.toISOString().replace(/\.\d+Z$/, "Z")])));
}

/** Sends the dead letters named (or all with `--all`) back to their queue. */
export async function runQueueRetry(framework: BubFramework, ids: readonly string[], options: { all?: boolean }, out: Writable): Promise<void> {
  const malformed = ids.filter((id) => !/^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d+)$/i.test(id));
  if (malformed.length > 0) throw new BubError("invalid_input", `not a dead-letter id: ${malformed.join(", ")} (bub queue list shows them)`);
  const moved = await withAdmin(framework, (admin) => admin.retry(options.all ? null : ids));
  if (!options.all && moved < ids.length) throw new BubError("invalid_input", `${ids.length - moved} of ${ids.length} id(s) are not dead letters (see bub queue list)${moved > 0 ? `; ${moved} sent back` : ""}`);
  out.write(`${moved} message${moved === 1 ? "" : "s"} sent back to the queue.\n`);
}

function table(header: readonly string[], rows: readonly string[][]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)));
  const line = (cells: readonly string[]) => `${cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join("  ").trimEnd()}\n`;
  return [header, ...rows].map(line).join("");
}
