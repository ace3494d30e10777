/**
 * The ledger in PostgreSQL (with `BUB_DATABASE_URL`): the table `bub_deliveries`, created on
 * first use under an advisory lock (several gateways may start together). Every write is one
 * autocommitted statement, durable when it resolves. Gateways sharing the database each
 * send the records they own; a record whose owner stopped renewing its lease (the process
 * died) is taken by the next sweep of another gateway, or of the restarted one.
 */
import { createHash } from "node:crypto";
import type { Pool } from "pg";
import { checkDatabaseUrl } from "../../tape/postgres/lazy-store.ts";
import { describeDatabaseUrl } from "../../tape/postgres/errors.ts";
import { coalescing } from "../../tape/postgres/coalesce.ts";
import { namedStatement } from "../../tape/postgres/named.ts";
import { COLUMNS, LEASE_MS, recordOf } from "./rows.ts";
import { KEY_KEEP_DAYS, type DeliveryRecord, type DeliveryState, type DeliveryStore, type NewDelivery } from "./types.ts";

const LOCK_KEY = createHash("sha256").update("bub-deliveries-schema").digest().readBigInt64BE(0).toString();

const SCHEMA = `
BEGIN;
SELECT pg_advisory_xact_lock(${LOCK_KEY});
CREATE TABLE IF NOT EXISTS bub_deliveries (
  id bigserial PRIMARY KEY,
  source text NOT NULL,
  chat_id text NOT NULL,
  session_id text NOT NULL,
  text text NOT NULL,
  options text NOT NULL DEFAULT '',
  inbound text NOT NULL DEFAULT '[]',
  parts_done integer NOT NULL DEFAULT 0,
  attempts integer NOT NULL DEFAULT 0,
  state text NOT NULL DEFAULT 'pending',
  possibly_repeated integer NOT NULL DEFAULT 0,
  error text NOT NULL DEFAULT '',
  owner text,
  lease_until bigint NOT NULL DEFAULT 0,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
ALTER TABLE bub_deliveries ADD COLUMN IF NOT EXISTS options text NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS bub_deliveries_state ON bub_deliveries (state, source, id);
CREATE TABLE IF NOT EXISTS bub_delivery_keys (
  key text PRIMARY KEY,
  delivery_id bigint NOT NULL DEFAULT 0,
  created_at bigint NOT NULL
);
COMMIT;`;

/**
 * Connects to `url` and creates the table when it is missing.
 * @throws BubError(config) for a bad URL; the driver's error when the server refuses.
 */
export async function openPostgresDeliveryStore(url: string): Promise<DeliveryStore> {
  const checked = checkDatabaseUrl(url);
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({ connectionString: checked, max: 4, connectionTimeoutMillis: 10_000, application_name: "bub delivery" });
  pool.on("error", () => undefined);
  try {
    await pool.query(SCHEMA);
    await pool.query("DELETE FROM bub_delivery_keys WHERE created_at < $1", [Date.now() - KEY_KEEP_DAYS * 86_400_000]);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
  return new PostgresDeliveryStore(pool, describeDatabaseUrl(checked));
}

/**
 * A keyed outbound in one statement: $1 source, $2 chat, $3 session, $4 text, $5 inbound
 * (JSON), $6 owner, $7 lease end, $8 now, $9 options, $10 key. Answers the new record (with
 * `blocked`, as {@link PostgresDeliveryStore} `#blocked` does), or the earlier copy of the
 * key taken over when it is still pending under another owner, or nothing.
 */
const KEYED_SQL = `
WITH drawn AS (
  SELECT nextval(pg_get_serial_sequence('bub_deliveries', 'id')) AS id
), fresh AS (
  INSERT INTO bub_delivery_keys (key, delivery_id, created_at) SELECT $10, drawn.id, $8 FROM drawn
  ON CONFLICT (key) DO NOTHING RETURNING delivery_id
), added AS (
  INSERT INTO bub_deliveries (id, source, chat_id, session_id, text, inbound, owner, lease_until, created_at, updated_at, options)
  SELECT fresh.delivery_id, $1, $2, $3, $4, $5, $6, $7, $8, $8, $9 FROM fresh RETURNING ${COLUMNS}
), taken AS (
  UPDATE bub_deliveries SET owner = $6, lease_until = $7
   WHERE NOT EXISTS (SELECT 1 FROM fresh) AND id = (SELECT delivery_id FROM bub_delivery_keys WHERE key = $10)
     AND state = 'pending' AND owner IS DISTINCT FROM $6
  RETURNING ${COLUMNS}
)
SELECT added.*, EXISTS (SELECT 1 FROM bub_deliveries d WHERE d.source = added.source AND d.chat_id = added.chat_id AND d.state = 'pending' AND d.id < added.id AND d.owner IS DISTINCT FROM $6) AS blocked FROM added
UNION ALL
SELECT taken.*, false AS blocked FROM taken`;
const KEYED = namedStatement(KEYED_SQL);

/**
 * {@link KEYED_SQL} for several keyed outbounds at once (turns of several chats recording
 * their replies together): $1–$7 per outbound its source, chat, session, text, inbound
 * (JSON), options and key, in order; $8 owner, $9 lease end, $10 now. Each row answered
 * carries `n`, the outbound's place in the arrays.
 */
const KEYED_MANY_SQL = `
WITH input AS (
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
    WITH ORDINALITY AS t(source, chat_id, session_id, text, inbound, options, key, n)
), drawn AS MATERIALIZED (
  SELECT input.*, nextval(pg_get_serial_sequence('bub_deliveries', 'id')) AS id FROM input
), fresh AS (
  INSERT INTO bub_delivery_keys (key, delivery_id, created_at) SELECT key, id, $10 FROM drawn ORDER BY n
  ON CONFLICT (key) DO NOTHING RETURNING key, delivery_id
), added AS (
  INSERT INTO bub_deliveries (id, source, chat_id, session_id, text, inbound, owner, lease_until, created_at, updated_at, options)
  SELECT d.id, d.source, d.chat_id, d.session_id, d.text, d.inbound, $8, $9, $10, $10, d.options
    FROM drawn d JOIN fresh f ON f.delivery_id = d.id ORDER BY d.n RETURNING ${COLUMNS}
), taken AS (
  UPDATE bub_deliveries AS b SET owner = $8, lease_until = $9
    FROM bub_delivery_keys k JOIN input i ON i.key = k.key
   WHERE b.id = k.delivery_id AND NOT EXISTS (SELECT 1 FROM fresh f WHERE f.key = i.key)
     AND b.state = 'pending' AND b.owner IS DISTINCT FROM $8
  RETURNING ${COLUMNS.split(", ").map((column) => `b.${column}`).join(", ")}, i.n
)
SELECT added.*, d.n, EXISTS (SELECT 1 FROM bub_deliveries o WHERE o.source = added.source AND o.chat_id = added.chat_id AND o.state = 'pending' AND o.id < added.id AND o.owner IS DISTINCT FROM $8) AS blocked
  FROM added JOIN drawn d ON d.id = added.id
UNION ALL
SELECT taken.*, false AS blocked FROM taken`;
const KEYED_MANY = namedStatement(KEYED_MANY_SQL);

/** Keyed outbounds recorded in one statement at most. */
const MAX_KEYED = 64;

/** One keyed outbound to record (see {@link PostgresDeliveryStore.record}). */
interface Keyed {
  readonly owner: string;
  readonly delivery: NewDelivery;
  readonly key: string;
}

/** A sent record forgotten (runs once per reply not confirmed by its job's completion). */
const CONFIRM = namedStatement("DELETE FROM bub_deliveries WHERE id = $1");

class PostgresDeliveryStore implements DeliveryStore {
  readonly where: string;
  readonly #pool: Pool;
  /** Keyed outbounds asked for while others are being recorded go together in the next statement. */
  readonly #keyed = coalescing((batch: readonly Keyed[]) => this.#insertKeyed(batch), MAX_KEYED);

  constructor(pool: Pool, database: string) {
    this.#pool = pool;
    this.where = `postgres ${database}`;
  }

  async #rows(sql: string, values: unknown[]): Promise<DeliveryRecord[]> {
    const { rows } = await this.#pool.query<Record<string, unknown>>(sql, values);
    return rows.map(recordOf);
  }

  async #count(sql: string, values: unknown[]): Promise<number> {
    const result = await this.#pool.query(sql, values);
    return result.rowCount ?? 0;
  }

  async record(owner: string, deliveries: readonly NewDelivery[]): Promise<DeliveryRecord[]> {
    if (deliveries.some((delivery) => delivery.key !== undefined)) {
      // Keyed outbounds one statement each, in order: the key and the record are written together or not at all.
      const recorded: DeliveryRecord[] = [];
      for (const delivery of deliveries) recorded.push(...(delivery.key === undefined ? await this.#insert(owner, [delivery]) : await this.#keyed.load({ owner, delivery, key: delivery.key })));
      return recorded;
    }
    return this.#insert(owner, deliveries);
  }

  /**
   * Records each outbound and its key in one statement (so together or not at all, with no
   * transaction around it), unless the key is in `bub_delivery_keys` already: then the
   * earlier copy, when it is still pending, is taken over (answered, to be sent by this
   * process now) and this one is not recorded. The record's id is drawn first so the key
   * row can name it in the same statement (an id drawn for a key seen before is skipped).
   * Answers each outbound's records (none or one), in order.
   */
  async #insertKeyed(batch: readonly Keyed[]): Promise<DeliveryRecord[][]> {
    const now = Date.now();
    const [only] = batch;
    if (!only || batch.length === 1 || batch.some(({ owner }) => owner !== only.owner)) {
      // One outbound (or, which the ledger never does, several owners): one statement each.
      return Promise.all(batch.map(async ({ owner, delivery, key }) => {
        const { rows } = await this.#pool.query<Record<string, unknown>>({ ...KEYED, values: [delivery.source, delivery.chatId, delivery.sessionId, delivery.text, JSON.stringify(delivery.inbound), owner, now + LEASE_MS, now, delivery.options ?? "", key] });
        return rows.map((row) => ({ ...recordOf(row), blocked: row.blocked === true }));
      }));
    }
    const column = (pick: (item: Keyed) => string) => batch.map(pick);
    const { rows } = await this.#pool.query<Record<string, unknown>>({ ...KEYED_MANY, values: [
      column(({ delivery }) => delivery.source),
      column(({ delivery }) => delivery.chatId),
      column(({ delivery }) => delivery.sessionId),
      column(({ delivery }) => delivery.text),
      column(({ delivery }) => JSON.stringify(delivery.inbound)),
      column(({ delivery }) => delivery.options ?? ""),
      column(({ key }) => key),
      only.owner,
      now + LEASE_MS,
      now,
    ] });
    const answers = batch.map((): DeliveryRecord[] => []);
    for (const row of rows) answers[Number(row.n) - 1]?.push({ ...recordOf(row), blocked: row.blocked === true });
    return answers;
  }

  /**
   * Runs `insert` (an INSERT … RETURNING) and answers its records, each marked `blocked` when
   * another process than the owner (parameter `$ownerParam`) still has an older pending record
   * of its chat; in the same statement.
   */
  async #blocked(insert: string, values: unknown[], ownerParam: number, client: Pick<Pool, "query">): Promise<DeliveryRecord[]> {
    const { rows } = await client.query<Record<string, unknown>>(
      `WITH added AS (${insert})
       SELECT added.*, EXISTS (SELECT 1 FROM bub_deliveries d WHERE d.source = added.source AND d.chat_id = added.chat_id AND d.state = 'pending' AND d.id < added.id AND d.owner IS DISTINCT FROM $${ownerParam}) AS blocked FROM added`,
      values,
    );
    return rows.map((row) => ({ ...recordOf(row), blocked: row.blocked === true }));
  }

  async #insert(owner: string, deliveries: readonly NewDelivery[]): Promise<DeliveryRecord[]> {
    if (deliveries.length === 0) return [];
    const now = Date.now();
    const values: unknown[] = [];
    const tuples = deliveries.map((delivery) => {
      const base = values.length;
      values.push(delivery.source, delivery.chatId, delivery.sessionId, delivery.text, JSON.stringify(delivery.inbound), owner, now + LEASE_MS, now, now, delivery.options ?? "");
      return `(${Array.from({ length: 10 }, (_, index) => `$${base + index + 1}`).join(", ")})`;
    });
    values.push(owner);
    const rows = await this.#blocked(`INSERT INTO bub_deliveries (source, chat_id, session_id, text, inbound, owner, lease_until, created_at, updated_at, options) VALUES ${tuples.join(", ")} RETURNING ${COLUMNS}`, values, values.length, this.#pool);
    return rows.sort((a, b) => a.id - b.id);
  }

  async progress(id: number, partsDone: number): Promise<void> {
    await this.#pool.query("UPDATE bub_deliveries SET parts_done = $1, updated_at = $2 WHERE id = $3", [partsDone, Date.now(), id]);
  }

  async confirm(id: number, possiblyRepeated: boolean): Promise<void> {
    if (possiblyRepeated) await this.#pool.query("UPDATE bub_deliveries SET state = 'sent', owner = NULL, updated_at = $1 WHERE id = $2", [Date.now(), id]);
    else await this.#pool.query({ ...CONFIRM, values: [id] });
  }

  async failed(id: number, attempts: number, possiblyRepeated: boolean, error: string): Promise<void> {
    await this.#pool.query("UPDATE bub_deliveries SET attempts = $1, possibly_repeated = $2, error = $3, updated_at = $4 WHERE id = $5", [attempts, possiblyRepeated ? 1 : 0, error, Date.now(), id]);
  }

  async deadLetter(id: number, attempts: number, possiblyRepeated: boolean, error: string): Promise<void> {
    await this.#pool.query("UPDATE bub_deliveries SET state = 'dead', owner = NULL, attempts = $1, possibly_repeated = $2, error = $3, updated_at = $4 WHERE id = $5", [attempts, possiblyRepeated ? 1 : 0, error, Date.now(), id]);
  }

  async claim(source: string, owner: string, takeOver: boolean): Promise<DeliveryRecord[]> {
    const now = Date.now();
    await this.#pool.query("UPDATE bub_deliveries SET lease_until = $1 WHERE owner = $2 AND state = 'pending'", [now + LEASE_MS, owner]);
    const rows = await this.#rows(
      `UPDATE bub_deliveries SET owner = $1, lease_until = $2 WHERE source = $3 AND state = 'pending' AND (owner IS NULL OR lease_until < $4 OR $5) AND owner IS DISTINCT FROM $1 RETURNING ${COLUMNS}`,
      [owner, now + LEASE_MS, source, now, takeOver],
    );
    return rows.sort((a, b) => a.id - b.id);
  }

  async takeOlder(source: string, chatId: string, beforeId: number, owner: string): Promise<{ taken: DeliveryRecord[]; held: boolean }> {
    const now = Date.now();
    const taken = await this.#rows(
      `UPDATE bub_deliveries SET owner = $1, lease_until = $2 WHERE source = $3 AND chat_id = $4 AND state = 'pending' AND id < $5 AND owner IS DISTINCT FROM $1 AND (owner IS NULL OR lease_until < $6) RETURNING ${COLUMNS}`,
      [owner, now + LEASE_MS, source, chatId, beforeId, now],
    );
    const { rows } = await this.#pool.query<{ held: boolean }>(
      "SELECT EXISTS (SELECT 1 FROM bub_deliveries WHERE source = $1 AND chat_id = $2 AND state = 'pending' AND id < $3 AND owner IS DISTINCT FROM $4) AS held",
      [source, chatId, beforeId, owner],
    );
    return { taken: taken.sort((a, b) => a.id - b.id), held: rows[0]?.held === true };
  }

  list(states: readonly DeliveryState[], limit = 1000): Promise<DeliveryRecord[]> {
    return this.#rows(`SELECT ${COLUMNS} FROM bub_deliveries WHERE state = ANY($1::text[]) ORDER BY id LIMIT $2`, [[...states], limit]);
  }

  retry(ids: readonly number[] | null): Promise<number> {
    const set = "SET state = 'pending', owner = NULL, attempts = 0, possibly_repeated = 0, updated_at = $1";
    if (ids === null) return this.#count(`UPDATE bub_deliveries ${set} WHERE state = 'dead'`, [Date.now()]);
    return this.#count(`UPDATE bub_deliveries ${set} WHERE state = 'dead' AND id = ANY($2::bigint[])`, [Date.now(), [...ids]]);
  }

  purge(ids: readonly number[] | null): Promise<number> {
    if (ids === null) return this.#count("DELETE FROM bub_deliveries WHERE state IN ('dead', 'sent')", []);
    return this.#count("DELETE FROM bub_deliveries WHERE state IN ('dead', 'sent') AND id = ANY($1::bigint[])", [[...ids]]);
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }
}
