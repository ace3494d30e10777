/**
 * The delivery ledger's confirmation of a queued turn's last reply, for an engine that
 * cannot fold it into its job's completion (pg-boss, or a job no longer held here).
 *
 * The queue keeps no record of the replies sent (an older bub kept them in
 * `bub_queue_replies`, which is no longer read or written): the ledger's keys
 * (`bub_delivery_keys`, one per reply of a queued turn) tell a run of the same message
 * again which replies went out already.
 */

/** What the confirmation needs of a connection pool: one statement. */
export interface SqlRunner {
  executeSql(text: string, values?: unknown[]): Promise<unknown>;
}

/**
 * Confirms a sent reply's record in the delivery ledger (deletes it from `bub_deliveries`,
 * which the ledger created on start in the same database), as the ledger's own
 * confirmation would.
 */
export async function confirmDelivery(db: SqlRunner, id: number): Promise<void> {
  await db.executeSql("DELETE FROM bub_deliveries WHERE id = $1", [id]);
}
