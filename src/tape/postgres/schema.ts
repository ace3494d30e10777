/**
 * The PostgreSQL tape store's schema, as numbered migrations applied in order on start. The
 * versions applied are rows of `bub_schema_migrations`; a transaction-scoped advisory lock
 * (keyed by the schema the tables live in) makes processes that start together take turns,
 * so each migration runs exactly once.
 */
import type pg from "pg";
import { BubError } from "../../kernel/errors.ts";

/** One step of the schema; `sql` runs in the migration's transaction. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** Every migration, oldest first. Append new ones; never edit one that has shipped. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "tapes and entries",
    sql: `
CREATE TABLE bub_tapes (
  name text PRIMARY KEY,
  last_id bigint NOT NULL
);
CREATE TABLE bub_tape_entries (
  tape text NOT NULL,
  id bigint NOT NULL,
  kind text NOT NULL,
  anchor_name text,
  payload json NOT NULL,
  meta json NOT NULL,
  date text NOT NULL,
  PRIMARY KEY (tape, id)
);
CREATE INDEX bub_tape_entries_kind ON bub_tape_entries (tape, kind, id);
CREATE INDEX bub_tape_entries_anchor ON bub_tape_entries (tape, anchor_name, id) WHERE anchor_name IS NOT NULL;`,
  },
  {
    version: 2,
    name: "tape name index",
    sql: `
CREATE TABLE bub_tape_names (
  tape text PRIMARY KEY,
  session_id text NOT NULL,
  workspace text NOT NULL,
  date text NOT NULL
);`,
  },
];

/** The newest schema version this build knows. */
export const SCHEMA_VERSION = MIGRATIONS.at(-1)?.version ?? 0;

/**
 * Brings the schema of the connected database (its current schema) up to
 * {@link SCHEMA_VERSION}; answers the versions it applied.
 * @throws BubError `config` when the database was migrated by a newer Bub.
 */
export async function migrate(client: pg.PoolClient | pg.Client, migrations: readonly Migration[] = MIGRATIONS): Promise<number[]> {
  const applied: number[] = [];
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtext('bub_schema_migrations:' || current_schema()))");
    await client.query(
      "CREATE TABLE IF NOT EXISTS bub_schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    const { rows } = await client.query<{ version: number | null }>("SELECT max(version) AS version FROM bub_schema_migrations");
    const current = rows[0]?.version ?? 0;
    const newest = migrations[migrations.length - 1]?.version ?? 0;
    if (current > newest) {
      throw new BubError(
        "config",
        `The tape database has schema version ${current}, newer than this Bub knows (${newest}): upgrade Bub on this machine to the version the other processes run.`,
      );
    }
    for (const migration of migrations) {
      if (migration.version <= current) continue;
      await client.query(migration.sql);
      await client.query("INSERT INTO bub_schema_migrations (version, name) VALUES ($1, $2)", [migration.version, migration.name]);
      applied.push(migration.version);
    }
    await client.query("COMMIT");
    return applied;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}
