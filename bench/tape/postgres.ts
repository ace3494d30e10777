// PostgreSQL for the tape benchmarks: the server in BUB_BENCH_DATABASE_URL, or an embedded
// one started for the run with crash safety on (fsync, synchronous commit), so its figures
// compare with SQLite's synchronous=FULL and the file store's fdatasync. Each scratch
// directory gets its own schema, so runs never see each other's tapes.
import { createHash } from "node:crypto";
import pg from "pg";
import type { TapeStore } from "../../src/kernel/tape-contract.ts";
import { createPostgresTapeStore } from "../../src/tape/postgres/lazy-store.ts";
import { startPostgres, type PostgresServer } from "../../test/support/postgres.ts";

/** Makes stores keyed by scratch directory; `stop()` drops the schemas and stops an embedded server. */
export async function benchPostgres(): Promise<{ make: (directory: string) => Promise<TapeStore>; where: string; stop: () => Promise<void> }> {
  const external = process.env.BUB_BENCH_DATABASE_URL;
  const server: PostgresServer | null = external ? null : await startPostgres({ durable: true });
  const base = external ?? server!.url();
  const schemas = new Set<string>();
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  return {
    where: external ? "BUB_BENCH_DATABASE_URL" : "embedded PostgreSQL 18, fsync on",
    async make(directory) {
      const schema = `bub_bench_${createHash("sha256").update(directory).digest("hex").slice(0, 12)}`;
      if (!schemas.has(schema)) await admin(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      schemas.add(schema);
      const url = new URL(base);
      url.searchParams.set("options", `-c search_path=${schema}`);
      return createPostgresTapeStore({ url: url.toString() });
    },
    async stop() {
      for (const schema of schemas) await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await server?.stop();
    },
  };
}
