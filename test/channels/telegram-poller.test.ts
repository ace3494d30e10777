/**
 * One poller per bot: with tapes in PostgreSQL only the gateway holding the bot's advisory
 * lock calls getUpdates; the others stand by and take over when it dies. Against a real
 * PostgreSQL (test/support/postgres.ts), the fake Bot API and the fake model.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import pg from "pg";
import { BubError } from "../../src/kernel/errors.ts";
import { pollerLockKey, postgresPollerElection } from "../../src/channels/telegram/poller-lock.ts";
import { reply } from "../support/fake-openai.ts";
import { useFakeOpenAI } from "../support/fake-openai-suite.ts";
import { startFakeTelegram } from "../support/fake-telegram.ts";
import { usePostgres } from "../support/postgres.ts";
import { startSourceGateway, type SourceGateway } from "../support/source-gateway.ts";
import { tempDir } from "../support/temp.ts";
import { eventually } from "../support/eventually.ts";

const postgres = usePostgres();

/** Whether `promise` settles within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe("the poller election (advisory lock)", () => {
  it("elects one process per bot; another bot is elected independently; the next one takes over on release", { timeout: 60_000 }, async () => {
    const url = await (await postgres()).createDatabase();
    const stop = new AbortController();
    const first = postgresPollerElection({ url, botId: "123", retrySeconds: 0.2 });
    const second = postgresPollerElection({ url, botId: "123", retrySeconds: 0.2 });
    const other = postgresPollerElection({ url, botId: "456", retrySeconds: 0.2 });
    const held = await first.elect(stop.signal);
    assert.ok(held);
    const otherHeld = await other.elect(stop.signal);
    assert.ok(otherHeld, "another bot has its own lock");
    const waiting = second.elect(stop.signal);
    assert.equal(await settlesWithin(waiting, 1000), false, "the second process stands by while the first holds the lock");
    const released = Date.now();
    await held.release();
    const next = await waiting;
    assert.ok(next);
    assert.ok(Date.now() - released < 15_000, "taken over within a few retries");
    assert.equal(next.lost.aborted, false);
    await next.release();
    await otherHeld.release();
    assert.equal(next.lost.aborted, true, "a released turn is over");
  });

  it("ends the turn when the lock's connection is killed, and answers null once stopped", { timeout: 60_000 }, async () => {
    const url = await (await postgres()).createDatabase();
    const stop = new AbortController();
    const election = postgresPollerElection({ url, botId: "789", retrySeconds: 0.2 });
    const turn = await election.elect(stop.signal);
    assert.ok(turn);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ pid: number }>("SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND ((classid::bigint << 32) | objid::bigint) = ($1::bigint & x'ffffffffffffffff'::bigint)", [
        pollerLockKey("789").toString(),
      ]);
      assert.equal(rows.length, 1, "the lock is held under the bot's key");
      await admin.query("SELECT pg_terminate_backend($1)", [rows[0]!.pid]);
    } finally {
      await admin.end();
    }
    await eventually(() => (turn.lost.aborted ? true : undefined), "the turn to be lost", 5000);
    await turn.release();
    stop.abort();
    assert.equal(await election.elect(stop.signal), null);
  });

  it("refuses a missing or malformed BUB_DATABASE_URL without showing it", () => {
    assert.throws(() => postgresPollerElection({ url: "", botId: "1", retrySeconds: 1 }), (error: unknown) => BubError.isInstance(error) && error.kind === "config");
    assert.throws(
      () => postgresPollerElection({ url: "mysql://user:hunter2@db/x", botId: "1", retrySeconds: 1 }),
      (error: unknown) => BubError.isInstance(error) && error.kind === "config" && !error.message.includes("hunter2"),
    );
  });
});

describe("two gateways for one bot on one database", () => {
  const model = useFakeOpenAI();

  it("only the elected one polls; after kill -9 the other polls within seconds and answers with the shared session", { timeout: 120_000 }, async () => {
    const url = await (await postgres()).createDatabase();
    const telegram = await startFakeTelegram({ token: "123:TEST" });
    // One workspace (tape names derive from it), a BUB_HOME (inbound journal) per process.
    const workspace = await tempDir();
    const homes = [await tempDir(), await tempDir()];
    const retrySeconds = 1;
    const env = {
      BUB_MODEL: "fake:any",
      BUB_API_BASE: model.url,
      BUB_API_KEY: "sk-test",
      BUB_TAPE_STORE: "postgres",
      BUB_DATABASE_URL: url,
      BUB_TELEGRAM_POLLER_RETRY_SECONDS: String(retrySeconds),
      BUB_LOG_LEVEL: "info",
    };
    const gateways: SourceGateway[] = homes.map((home) => startSourceGateway(workspace.path, telegram, { ...env, BUB_HOME: join(home.path, ".bub") }));
    try {
      const elected = (gateway: SourceGateway) => gateway.stderr().includes("telegram.poller elected");
      const standingBy = (gateway: SourceGateway) => gateway.stderr().includes("telegram.poller standing by");
      await eventually(() => (gateways.some(elected) && gateways.some(standingBy) ? true : undefined), "one elected poller and one standing by", 60_000);
      const poller = gateways.find(elected)!;
      const standby = gateways.find((gateway) => gateway !== poller)!;
      assert.equal(elected(standby), false, standby.stderr());
      // Both run for a few retries: still one poller.
      await new Promise((resolve) => setTimeout(resolve, (retrySeconds * 2 + 0.5) * 1000));
      assert.equal(elected(standby), false, standby.stderr());

      model.script(reply.text("first answer"));
      telegram.sendText({ chatId: 7, userId: 7, text: "remember the word pelican" });
      const [first] = await telegram.waitForCalls("sendMessage", 1);
      assert.equal(first!.payload.text, "first answer");
      assert.equal(telegram.overlappingPolls, 0, "never two getUpdates at once");

      // The reply is confirmed in the delivery ledger before the kill: a kill -9 between the
      // send and its confirmation may repeat it (the documented bound), which is not this test's point.
      for (let tries = 0; (await pendingDeliveries(url)) > 0; tries++) {
        if (tries > 500) throw new Error("timed out waiting for the first reply to be confirmed in the ledger");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      poller.kill();
      await poller.exited;
      const polledBefore = telegram.getUpdatesCount;
      // Within a few retries; the bound is loose so a loaded machine does not fail it (the timing is bench/cluster/kill.ts's).
      await eventually(() => (telegram.getUpdatesCount > polledBefore ? true : undefined), "the standby to poll", (retrySeconds + 15) * 1000);
      // The gateway's stderr is written in 20 ms batches: its line may follow its first poll.
      await eventually(() => (elected(standby) ? true : undefined), "the standby to say it was elected", 10_000);

      model.script(reply.text("second answer"));
      telegram.sendText({ chatId: 7, userId: 7, text: "which word?" });
      const sent = await telegram.waitForCalls("sendMessage", 2);
      assert.equal(sent[1]!.payload.text, "second answer");
      assert.equal(sent.length, 2, "each message answered once");
      // The survivor read the session's earlier turn from the shared tapes.
      assert.match(JSON.stringify(model.requests.at(-1)!.body), /remember the word pelican/);
      assert.equal(telegram.overlappingPolls, 0);
    } finally {
      for (const gateway of gateways) gateway.kill();
      await Promise.all(gateways.map((gateway) => gateway.exited));
      await telegram.close();
      for (const dir of [workspace, ...homes]) await dir.cleanup();
    }
  });
});

/** Replies the delivery ledger of the database at `url` still holds pending. */
async function pendingDeliveries(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ count: string }>("SELECT count(*) AS count FROM bub_deliveries WHERE state = 'pending'");
    return Number(rows[0]?.count ?? 0);
  } finally {
    await client.end();
  }
}
