// PostgreSQL tape stores for the tape tests: each in a fresh schema of one database on the
// test file's server (test/support/postgres.ts), so every store starts empty.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { createPostgresTapeStore, type PostgresTapeStore } from "../../../src/tape/postgres/lazy-store.ts";
import { usePostgres, type PostgresServer } from "../../support/postgres.ts";

/** A URL whose connections use `schema` as their search path (the store's tables go there). */
export function urlWithSchema(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set("options", `-c search_path=${schema}`);
  return parsed.toString();
}

/** Makes an empty schema in the server's `postgres` database and answers a URL that uses it. */
export async function freshSchemaUrl(server: PostgresServer): Promise<string> {
  const url = server.url();
  const schema = `bub_${randomBytes(6).toString("hex")}`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await client.end();
  }
  return urlWithSchema(url, schema);
}

/** Call at a test file's top level: a factory of empty PostgreSQL stores; the server starts on the first call and stops after the file. */
export function postgresStoreFactory(): () => Promise<PostgresTapeStore> {
  const postgres = usePostgres();
  return async () => createPostgresTapeStore({ url: await freshSchemaUrl(await postgres()) });
}
