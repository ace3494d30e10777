/** `bub delivery list`, `retry` and `purge`: see ./delivery.ts. */
import type { Writable } from "node:stream";
import { openDeliveryStore } from "../../channels/delivery/settings.ts";
import { redactSecrets } from "../../config/redaction.ts";
import { rememberSettingsSecrets } from "../../config/secrets.ts";
import type { DeliveryRecord, DeliveryStore } from "../../channels/delivery/types.ts";
import { BubError } from "../../kernel/errors.ts";
import type { BubFramework } from "../../kernel/framework.ts";

async function withStore<T>(framework: BubFramework, body: (store: DeliveryStore) => Promise<T>): Promise<T> {
  await framework.settings.prepare();
  const { store } = await openDeliveryStore(framework.settings, framework.home);
  try {
    return await body(store);
  } finally {
    await store.close();
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");
}

/** The first line of a text, at most `max` characters. */
function preview(text: string, max = 40): string {
  const line = text.split("\n", 1)[0] ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function json(record: DeliveryRecord): Record<string, unknown> {
  return {
    id: record.id,
    source: record.source,
    chat_id: record.chatId,
    session_id: record.sessionId,
    state: record.state,
    attempts: record.attempts,
    possibly_repeated: record.possiblyRepeated,
    parts_done: record.partsDone,
    error: record.error,
    text: record.text,
    created_at: iso(record.createdAt),
    updated_at: iso(record.updatedAt),
  };
}

/** The ledger's pending, dead and possibly repeated records (for `bub ui`'s `/deliveries`). */
export function listDeliveries(framework: BubFramework): Promise<DeliveryRecord[]> {
  return withStore(framework, (store) => store.list(["dead", "sent", "pending"]));
}

/**
 * Prints the dead letters, the possibly repeated sends and the count waiting (or one JSON
 * object with `--json`); known secrets in reply texts and errors are redacted.
 */
export async function runDeliveryList(framework: BubFramework, options: { json?: boolean }, output: Writable): Promise<void> {
  const records = await listDeliveries(framework);
  rememberSettingsSecrets(framework.settings);
  const out = { write: (text: string) => output.write(redactSecrets(text)) };
  const dead = records.filter((record) => record.state === "dead");
  const repeated = records.filter((record) => record.state === "sent");
  const pending = records.filter((record) => record.state === "pending").length;
  if (options.json) {
    out.write(`${JSON.stringify({ pending, dead_letters: dead.map(json), possibly_repeated: repeated.map(json) }, null, 2)}\n`);
    return;
  }
  out.write(`${pending} repl${pending === 1 ? "y waits" : "ies wait"} to be sent; ${dead.length} dead letter${dead.length === 1 ? "" : "s"}.\n`);
  const rows = (list: DeliveryRecord[]) => list.map((record) => [String(record.id), record.chatId, record.sessionId, String(record.attempts), iso(record.updatedAt), preview(record.text), record.error]);
  const header = ["ID", "CHAT", "SESSION", "TRIES", "WHEN", "TEXT", "ERROR"];
  if (dead.length > 0) out.write(`\nDead letters (bub delivery retry ID, or --all; bub delivery purge ID):\n${table(header, rows(dead))}`);
  if (repeated.length > 0) out.write(`\nSent after a try whose connection died (the chat may have them twice):\n${table(header, rows(repeated))}`);
}

/** `retry` (dead letters back to pending) or `purge` (forgotten) for the ids named, or all with `--all`. */
export async function runDeliveryChange(framework: BubFramework, action: "retry" | "purge", ids: readonly string[], options: { all?: boolean }, out: Writable): Promise<void> {
  const malformed = ids.filter((id) => !/^[1-9]\d{0,15}$/.test(id));
  if (malformed.length > 0) throw new BubError("invalid_input", `not a delivery id: ${malformed.join(", ")} (bub delivery list shows them)`);
  const selected = options.all ? null : ids.map(Number);
  const changed = await withStore(framework, (store) => (action === "retry" ? store.retry(selected) : store.purge(selected)));
  if (selected !== null && changed < selected.length) {
    const what = action === "retry" ? "dead letters" : "dead letters or possibly repeated sends";
    throw new BubError("invalid_input", `${selected.length - changed} of ${selected.length} id(s) are not ${what} (see bub delivery list)${changed > 0 ? `; ${changed} ${action === "retry" ? "sent again" : "purged"}` : ""}`);
  }
  const noun = `repl${changed === 1 ? "y" : "ies"}`;
  out.write(action === "retry" ? `${changed} ${noun} will be sent again (by the running gateway, else the next one to start).\n` : `${changed} ${noun} purged.\n`);
}

function table(header: readonly string[], rows: readonly string[][]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)));
  const line = (cells: readonly string[]) => `${cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join("  ").trimEnd()}\n`;
  return [header, ...rows].map(line).join("");
}
