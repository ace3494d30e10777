/**
 * The ledger in a SQLite file under the home (`<BUB_HOME>/delivery.sqlite3`), used with the
 * file and SQLite tape stores, in WAL mode. Writes are group-committed: the writes asked for
 * while the event loop turns are run together in one transaction at the next `setImmediate`,
 * and each promise resolves once that commit is on the disk (the log is synced off the event
 * loop, shared by the commits made meanwhile: `tape/wal-sync.ts`), and the database is
 * checkpointed when its writes pause (`tape/wal-checkpoint.ts`).
 */
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { openWalDatabase } from "../../tape/sqlite-open.ts";
import { checkpointWhenQuiet, type QuietCheckpoints } from "../../tape/wal-checkpoint.ts";
import { createWalSync, type WalSync } from "../../tape/wal-sync.ts";
import { errorMessage } from "../../config/thrown.ts";
import { BubError } from "../../kernel/errors.ts";
import { COLUMNS, LEASE_MS, recordOf } from "./rows.ts";
import { KEY_KEEP_DAYS, type DeliveryRecord, type DeliveryState, type DeliveryStore, type NewDelivery } from "./types.ts";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS deliveries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  source TEXT NOT NULL,
  chat_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  text TEXT NOT NULL,
  options TEXT NOT NULL DEFAULT '',
  inbound TEXT NOT NULL DEFAULT '[]',
  parts_done INTEGER NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0,
  state TEXT NOT NULL DEFAULT 'pending',
  possibly_repeated INTEGER NOT NULL DEFAULT 0,
  error TEXT NOT NULL DEFAULT '',
  owner TEXT,
  lease_until INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS deliveries_state ON deliveries (state, source, id);
CREATE TABLE IF NOT EXISTS delivery_keys (
  key TEXT PRIMARY KEY,
  delivery_id INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL
);
`;

/** How long a statement waits for another process's write lock (`bub delivery` while the gateway runs). */
const BUSY_TIMEOUT_MS = 5000;

/** A prepared statement of the ledger's connection (prepared once, reused). */
type Statement = (sql: string) => StatementSync;

interface Write {
  /** Runs the write inside the transaction; answers what settles its promise after the commit. */
  run: (statement: Statement) => () => void;
  reject: (error: unknown) => void;
  /** Settled only once the commit is on the disk (else as soon as it is committed). */
  durable: boolean;
}

/**
 * Opens (creating it and its folder, owner-only) the ledger database at `path`.
 * @throws BubError(config) when it cannot be opened.
 */
export function openSqliteDeliveryStore(path: string): DeliveryStore {
  let database: DatabaseSync;
  try {
    database = openWalDatabase(path, BUSY_TIMEOUT_MS, SCHEMA, "NORMAL");
    // Ledgers made before outbounds had sending options get the column.
    if (!database.prepare("PRAGMA table_info(deliveries)").all().some((column) => column.name === "options")) database.exec("ALTER TABLE deliveries ADD COLUMN options TEXT NOT NULL DEFAULT ''");
    database.prepare("DELETE FROM delivery_keys WHERE created_at < ?").run(Date.now() - KEY_KEEP_DAYS * 86_400_000);
  } catch (error) {
    throw new BubError("config", `Cannot open the delivery ledger ${path} (${errorMessage(error)}): check that BUB_HOME is writable.`, { cause: error });
  }
  return new SqliteDeliveryStore(database, path);
}

class SqliteDeliveryStore implements DeliveryStore {
  readonly where: string;
  readonly #database: DatabaseSync;
  readonly #sync: WalSync;
  readonly #checkpoints: QuietCheckpoints;
  readonly #statements = new Map<string, StatementSync>();
  #writes: Write[] = [];
  #scheduled = false;
  #closed = false;

  constructor(database: DatabaseSync, path: string) {
    this.#database = database;
    this.#sync = createWalSync(path);
    this.#checkpoints = checkpointWhenQuiet(database);
    this.where = `sqlite ${path}`;
  }

  /**
   * Queues a write for the next group commit. A write that is not `durable` is settled once
   * committed: it survives the process being killed, and only a power loss right after it
   * may undo it (a confirmation undone that way makes the reply be sent again).
   */
  #write<T>(run: (statement: Statement) => T, durable = true): Promise<T> {
    if (this.#closed) return Promise.reject(new Error("the delivery ledger is closed"));
    const { promise, resolve, reject } = Promise.withResolvers<T>();
    this.#writes.push({
      run: (statement) => {
        const value = run(statement);
        return () => resolve(value);
      },
      reject,
      durable,
    });
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.#commit());
    }
    return promise;
  }

  #commit(): void {
    this.#scheduled = false;
    const writes = this.#writes;
    this.#writes = [];
    if (writes.length === 0) return;
    const settle: { write: Write; done: () => void }[] = [];
    const statement: Statement = (sql) => {
      let prepared = this.#statements.get(sql);
      if (!prepared) this.#statements.set(sql, (prepared = this.#database.prepare(sql)));
      return prepared;
    };
    try {
      this.#database.exec("BEGIN IMMEDIATE");
      try {
        for (const write of writes) settle.push({ write, done: write.run(statement) });
        this.#database.exec("COMMIT");
        this.#checkpoints.wrote();
      } catch (error) {
        this.#database.exec("ROLLBACK");
        throw error;
      }
    } catch (error) {
      for (const write of writes) write.reject(error);
      return;
    }
    const durable = settle.filter(({ write }) => write.durable);
    for (const { write, done } of settle) if (!write.durable) done();
    if (durable.length === 0) return;
    this.#sync.durable().then(
      () => {
        for (const { done } of durable) done();
      },
      (error: unknown) => {
        for (const { write } of durable) write.reject(new Error(`the delivery ledger could not be synced to disk (${errorMessage(error)})`, { cause: error }));
      },
    );
  }

  record(owner: string, deliveries: readonly NewDelivery[]): Promise<DeliveryRecord[]> {
    const now = Date.now();
    return this.#write((statement) => {
      const insert = statement(`INSERT INTO deliveries (source, chat_id, session_id, text, options, inbound, owner, lease_until, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${COLUMNS}`);
      const claimKey = statement("INSERT INTO delivery_keys (key, created_at) VALUES (?, ?) ON CONFLICT (key) DO NOTHING");
      const noteKey = statement("UPDATE delivery_keys SET delivery_id = ? WHERE key = ?");
      const adopt = statement(`UPDATE deliveries SET owner = ?, lease_until = ? WHERE id = (SELECT delivery_id FROM delivery_keys WHERE key = ?) AND state = 'pending' AND owner IS NOT ? RETURNING ${COLUMNS}`);
      const recorded: DeliveryRecord[] = [];
      for (const delivery of deliveries) {
        if (delivery.key !== undefined && Number(claimKey.run(delivery.key, now).changes) === 0) {
          // A key seen before: the earlier copy is sent instead (taken over while still pending), never this one.
          const earlier = adopt.get(owner, now + LEASE_MS, delivery.key, owner);
          if (earlier) recorded.push(recordOf(earlier));
          continue;
        }
        const row = insert.get(delivery.source, delivery.chatId, delivery.sessionId, delivery.text, delivery.options ?? "", JSON.stringify(delivery.inbound), owner, now + LEASE_MS, now, now);
        if (!row) throw new Error("the ledger inserted no row");
        const record = recordOf(row);
        if (delivery.key !== undefined) noteKey.run(record.id, delivery.key);
        recorded.push(record);
      }
      return recorded;
    });
  }

  async progress(id: number, partsDone: number): Promise<void> {
    await this.#write((statement) => statement("UPDATE deliveries SET parts_done = ?, updated_at = ? WHERE id = ?").run(partsDone, Date.now(), id), false);
  }

  async confirm(id: number, possiblyRepeated: boolean): Promise<void> {
    await this.#write((statement) =>
      possiblyRepeated
        ? statement("UPDATE deliveries SET state = 'sent', owner = NULL, updated_at = ? WHERE id = ?").run(Date.now(), id)
        : statement("DELETE FROM deliveries WHERE id = ?").run(id),
      false,
    );
  }

  async failed(id: number, attempts: number, possiblyRepeated: boolean, error: string): Promise<void> {
    await this.#write((statement) => statement("UPDATE deliveries SET attempts = ?, possibly_repeated = ?, error = ?, updated_at = ? WHERE id = ?").run(attempts, possiblyRepeated ? 1 : 0, error, Date.now(), id));
  }

  async deadLetter(id: number, attempts: number, possiblyRepeated: boolean, error: string): Promise<void> {
    await this.#write((statement) =>
      statement("UPDATE deliveries SET state = 'dead', owner = NULL, attempts = ?, possibly_repeated = ?, error = ?, updated_at = ? WHERE id = ?").run(attempts, possiblyRepeated ? 1 : 0, error, Date.now(), id),
    );
  }

  claim(source: string, owner: string, takeOver: boolean): Promise<DeliveryRecord[]> {
    const now = Date.now();
    return this.#write((statement) => {
      statement("UPDATE deliveries SET lease_until = ? WHERE owner = ? AND state = 'pending'").run(now + LEASE_MS, owner);
      const taken = statement(`UPDATE deliveries SET owner = ?, lease_until = ? WHERE source = ? AND state = 'pending' AND (owner IS NULL OR lease_until < ? OR ?) AND owner IS NOT ? RETURNING ${COLUMNS}`).all(owner, now + LEASE_MS, source, now, takeOver ? 1 : 0, owner);
      return taken.map(recordOf).sort((a, b) => a.id - b.id);
    });
  }

  /** One gateway per home: no other process owns this ledger's records while one runs. */
  async takeOlder(): Promise<{ taken: DeliveryRecord[]; held: boolean }> {
    return { taken: [], held: false };
  }

  async list(states: readonly DeliveryState[], limit = 1000): Promise<DeliveryRecord[]> {
    if (states.length === 0) return [];
    const rows = this.#database.prepare(`SELECT ${COLUMNS} FROM deliveries WHERE state IN (${states.map(() => "?").join(", ")}) ORDER BY id LIMIT ?`).all(...states, limit);
    return rows.map(recordOf);
  }

  retry(ids: readonly number[] | null): Promise<number> {
    return this.#write((statement) => {
      const now = Date.now();
      if (ids === null) return Number(statement("UPDATE deliveries SET state = 'pending', owner = NULL, attempts = 0, possibly_repeated = 0, updated_at = ? WHERE state = 'dead'").run(now).changes);
      const update = statement("UPDATE deliveries SET state = 'pending', owner = NULL, attempts = 0, possibly_repeated = 0, updated_at = ? WHERE state = 'dead' AND id = ?");
      return ids.reduce((moved, id) => moved + Number(update.run(now, id).changes), 0);
    });
  }

  purge(ids: readonly number[] | null): Promise<number> {
    return this.#write((statement) => {
      if (ids === null) return Number(statement("DELETE FROM deliveries WHERE state IN ('dead', 'sent')").run().changes);
      const remove = statement("DELETE FROM deliveries WHERE state IN ('dead', 'sent') AND id = ?");
      return ids.reduce((removed, id) => removed + Number(remove.run(id).changes), 0);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    // Writes already asked for are committed first.
    if (this.#writes.length > 0) await this.#write(() => undefined);
    this.#closed = true;
    this.#checkpoints.close();
    await this.#sync.close();
    this.#statements.clear();
    this.#database.close();
  }
}
