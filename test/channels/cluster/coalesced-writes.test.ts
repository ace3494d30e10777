// Writes of several turns in one statement (src/tape/postgres/coalesce.ts), each done as if
// written alone: the turns' ends on the shared queue (graphile-worker: job gone, reply's
// record confirmed, the session's next message woken) and the replies' keyed records in the
// delivery ledger (a new key recorded, a key seen before dropped or its pending copy taken over).
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import pg from "pg";
import type { QueuedJob } from "../../../src/channels/cluster/inbound-queue.ts";
import { openInboundQueue } from "../../../src/channels/cluster/open.ts";
import { openPostgresDeliveryStore } from "../../../src/channels/delivery/postgres-store.ts";
import type { DeliveryStore } from "../../../src/channels/delivery/types.ts";
import { eventually } from "../../support/eventually.ts";
import { startPostgres } from "../../support/postgres.ts";

const server = await startPostgres({ statements: true });
after(() => server.stop());

/** A fresh database counting its statements, a client on it and the delivery ledger's store there. */
async function freshDatabase(): Promise<{ url: string; client: pg.Client; ledger: DeliveryStore }> {
  const url = await server.createDatabase();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  return { url, client, ledger: await openPostgresDeliveryStore(url) };
}

/** How often the server ran the statements whose text is `like`, since the last reset. */
async function callsOf(client: pg.Client, like: string): Promise<number> {
  const { rows } = await client.query<{ calls: string }>("SELECT calls FROM pg_stat_statements WHERE query LIKE $1", [like]);
  return Number(rows[0]?.calls ?? 0);
}

describe("turns' ends on the shared queue (graphile-worker)", () => {
  it("ends the turns that end together in one statement, confirming their replies and waking their sessions' next messages", async () => {
    const { url, client, ledger } = await freshDatabase();
    const queue = await openInboundQueue("graphile", { url, source: "test", expireSeconds: 60, heartbeatSeconds: 2 });
    try {
      // Four sessions with a message each, and a second message waiting in the first.
      const inbound = (session: number, n: number) => ({ key: `k${n}`, session: `telegram:${session}`, item: { n }, order: n });
      await queue.accept([inbound(1, 1), inbound(2, 2), inbound(3, 3), inbound(4, 4), inbound(1, 5)]);
      const records = await ledger.record(
        "test",
        [1, 2, 3, 4].map((n) => ({ source: "telegram", chatId: String(n), sessionId: `telegram:${n}`, text: `reply ${n}`, inbound: [] })),
      );
      await client.query("SELECT pg_stat_statements_reset()");

      const started: QueuedJob[] = [];
      const ran: string[] = [];
      const allStarted = Promise.withResolvers<void>();
      await queue.work(
        4,
        async (job) => {
          ran.push(job.payload.key);
          if (job.payload.key === "k5") return queue.complete(job, []);
          started.push(job);
          if (started.length === 4) allStarted.resolve();
          await allStarted.promise;
          // The four end at once: one statement for all of them.
          const index = Number(job.payload.key.slice(1)) - 1;
          await queue.complete(job, [], records[index]?.id);
        },
        async () => undefined,
      );
      await eventually(() => (ran.length === 5 ? true : undefined), "the five messages to run", 20_000);
      assert.equal(ran.at(-1), "k5", "the first session's second message ran after its first ended");
      await eventually(async () => ((await client.query("SELECT count(*)::int AS n FROM graphile_worker._private_jobs")).rows[0]?.n === 0 ? true : undefined), "no job left");
      const { rows: left } = await client.query("SELECT count(*)::int AS n FROM bub_deliveries");
      assert.equal(left[0]?.n, 0, "each reply's record confirmed");
      assert.equal(await callsOf(client, "%unnest($1::bigint[], $2::text[])%"), 1, "the four ends in one statement");
    } finally {
      await queue.close();
      await ledger.close();
      await client.end();
    }
  });
});

describe("keyed records of the delivery ledger in PostgreSQL", () => {
  it("records the keyed replies of several turns in one statement, answering each as if recorded alone", async () => {
    const { client, ledger } = await freshDatabase();
    try {
      const reply = (n: number, key: string) => ({ source: "telegram", chatId: String(n), sessionId: `telegram:${n}`, text: `reply ${n}`, inbound: [n], key });
      // Before: one key recorded and sent (forgotten), one still pending under a process that died.
      const [sent] = await ledger.record("dead", [reply(1, "k1#0")]);
      assert.ok(sent);
      await ledger.confirm(sent.id, false);
      const [pending] = await ledger.record("dead", [reply(2, "k2#0")]);
      assert.ok(pending);
      await client.query("SELECT pg_stat_statements_reset()");

      const answers = await Promise.all([ledger.record("me", [reply(1, "k1#0")]), ledger.record("me", [reply(2, "k2#0")]), ledger.record("me", [reply(3, "k3#0")]), ledger.record("me", [reply(3, "k3#1")])]);
      assert.deepEqual(answers[0], [], "a key sent before: not recorded again");
      assert.deepEqual(answers[1]?.map((record) => [record.id, record.text]), [[pending.id, "reply 2"]], "a key pending under a dead owner: taken over");
      assert.deepEqual(answers[2]?.map((record) => record.text), ["reply 3"]);
      assert.deepEqual(answers[3]?.map((record) => record.text), ["reply 3"]);
      const [first, second] = [answers[2]?.[0], answers[3]?.[0]];
      assert.ok(first && second && first.id < second.id, "ids in the order asked");
      const { rows: owners } = await client.query<{ owner: string; n: number }>("SELECT owner, count(*)::int AS n FROM bub_deliveries GROUP BY owner");
      assert.deepEqual(owners, [{ owner: "me", n: 3 }]);
      assert.equal(await callsOf(client, "%WITH ORDINALITY AS t(source, chat_id%"), 1, "the four in one statement");
    } finally {
      await ledger.close();
      await client.end();
    }
  });
});
