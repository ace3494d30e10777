/** Database rows of the ledger as {@link DeliveryRecord}s (both stores use the same column names). */
import type { DeliveryRecord, DeliveryState } from "./types.ts";

/** The columns both stores select, in this order. */
export const COLUMNS = "id, source, chat_id, session_id, text, options, inbound, parts_done, attempts, state, possibly_repeated, error, created_at, updated_at";

function num(value: unknown): number {
  if (typeof value === "number") return value;
  if (typeof value === "bigint" || typeof value === "string") return Number(value);
  if (typeof value === "boolean") return value ? 1 : 0;
  return 0;
}

function text(value: unknown): string {
  return typeof value === "string" ? value : value === null || value === undefined ? "" : String(value);
}

function state(value: unknown): DeliveryState {
  return value === "dead" || value === "sent" ? value : "pending";
}

function ids(value: unknown): number[] {
  try {
    const parsed: unknown = JSON.parse(text(value) || "[]");
    return Array.isArray(parsed) ? parsed.filter((id) => typeof id === "number") : [];
  } catch {
    return [];
  }
}

/** One row (an object keyed by column) as a record. */
export function recordOf(row: Record<string, unknown>): DeliveryRecord {
  return {
    id: num(row.id),
    source: text(row.source),
    chatId: text(row.chat_id),
    sessionId: text(row.session_id),
    text: text(row.text),
    options: text(row.options),
    inbound: ids(row.inbound),
    partsDone: num(row.parts_done),
    attempts: num(row.attempts),
    state: state(row.state),
    possiblyRepeated: num(row.possibly_repeated) !== 0,
    error: text(row.error),
    createdAt: num(row.created_at),
    updatedAt: num(row.updated_at),
  };
}

/** How long a gateway's claim on its pending records lasts without being renewed (several gateways on PostgreSQL). */
export const LEASE_MS = 30_000;
