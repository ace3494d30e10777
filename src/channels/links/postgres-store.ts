/**
 * Identity links in PostgreSQL (`BUB_DATABASE_URL`): one row of `bub_identity_links` holds the
 * state as JSON, so every gateway on the database, on any host, sees the same links. A change
 * locks the row (`SELECT … FOR UPDATE`) for its transaction; the table is created on first
 * use under an advisory lock, so processes starting together do it once. `pg` is imported on
 * the first call only.
 */
import type pg from "pg";
import { errorMessage } from "../../config/thrown.ts";
import { BubError } from "../../kernel/errors.ts";
import { describeDatabaseUrl, postgresError } from "../../tape/postgres/errors.ts";
import { checkDatabaseUrl } from "../../tape/postgres/lazy-store.ts";
import { emptyLinkState, personOf, type LinkState } from "./codes.ts";
import { applyChange, parseLinkState, settle, type LinkStore } from "./store.ts";

const SCHEMA = `
SELECT pg_advisory_xact_lock(hashtext('bub_identity_links:' || current_schema()));
CREATE TABLE IF NOT EXISTS bub_identity_links (id integer PRIMARY KEY CHECK (id = 1), state jsonb NOT NULL);
INSERT INTO bub_identity_links (id, state) VALUES (1, '{}') ON CONFLICT (id) DO NOTHING;`;

/** The {@link LinkStore} in the PostgreSQL database at `url`; nothing connects until the first call. */
export function createPostgresLinkStore(url: string): LinkStore {
  const checked = checkDatabaseUrl(url);
  const where = `The bub_identity_links table at ${describeDatabaseUrl(checked)}`;
  let opening: Promise<pg.Pool> | null = null;

  function pool(): Promise<pg.Pool> {
    opening ??= (async () => {
      let driver: typeof pg;
      try {
        driver = (await import("pg")).default;
      } catch (error) {
        throw new BubError("config", `Identity links in PostgreSQL could not load the 'pg' driver (${errorMessage(error)}): reinstall bub-ts.`, { cause: error });
      }
      // Idle connections never keep a process alive (`bub link` exits when done).
      const created = new driver.Pool({ connectionString: checked, max: 2, application_name: "bub-links", connectionTimeoutMillis: 10_000, allowExitOnIdle: true });
      created.on("error", () => {}); // a dropped idle connection is replaced on the next query
      try {
        const client = await created.connect();
        try {
          await client.query(`BEGIN;${SCHEMA}COMMIT;`);
        } finally {
          client.release();
        }
      } catch (error) {
        await created.end().catch(() => {});
        throw error;
      }
      return created;
    })().catch((error: unknown) => {
      opening = null; // the next call tries again
      throw postgresError(error, checked);
    });
    return opening;
  }

  async function read(): Promise<LinkState> {
    try {
      const { rows } = await (await pool()).query<{ state: unknown }>("SELECT state FROM bub_identity_links WHERE id = 1");
      return rows[0] === undefined ? emptyLinkState() : parseLinkState(rows[0].state, where);
    } catch (error) {
      throw postgresError(error, checked);
    }
  }

  return {
    personOf: async (identity) => personOf(await read(), identity),
    list: async () => (await read()).people,
    async update<T>(change: (state: LinkState) => T): Promise<T> {
      let client: pg.PoolClient;
      try {
        client = await (await pool()).connect();
      } catch (error) {
        throw postgresError(error, checked);
      }
      let outcome: ReturnType<typeof applyChange<T>>;
      try {
        await client.query("BEGIN");
        const { rows } = await client.query<{ state: unknown }>("SELECT state FROM bub_identity_links WHERE id = 1 FOR UPDATE");
        const state = rows[0] === undefined ? emptyLinkState() : parseLinkState(rows[0].state, where);
        outcome = applyChange(state, change);
        await client.query("UPDATE bub_identity_links SET state = $1::jsonb WHERE id = 1", [JSON.stringify(state)]);
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw postgresError(error, checked);
      } finally {
        client.release();
      }
      return settle(outcome);
    },
    async close() {
      const current = opening;
      opening = null;
      await (await current?.catch(() => null))?.end();
    },
  };
}
