/**
 * The shared queue and the delivery ledger together, on a real PostgreSQL: a queued turn's
 * reply is handed to the ledger with its key (message key + reply index), and the ledger's
 * keys are the only record of the replies sent. When the process dies after the ledger took
 * a reply, the job runs again and produces the same reply again: the ledger drops the second
 * copy, even after it sent and forgot the first.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import pg from "pg";
import { ChannelMessage } from "../../../src/channels/message.ts";
import { ClusterQueue, type QueuedJob } from "../../../src/channels/cluster/queue.ts";
import { QueuedTurns, type RecordedOrigin } from "../../../src/channels/cluster/turns.ts";
import { openInboundQueue } from "../../../src/channels/cluster/open.ts";
import { DeliveryLedger, type DeliverySender } from "../../../src/channels/delivery/ledger.ts";
import { openPostgresDeliveryStore } from "../../../src/channels/delivery/postgres-store.ts";
import type { DeliveryStore } from "../../../src/channels/delivery/types.ts";
import { toEnvelope, type Envelope } from "../../../src/kernel/envelope.ts";
import { eventually } from "../../support/eventually.ts";
import { recordingSender } from "../delivery/support.ts";
import { turnRunner } from "./turn-runner.ts";
import { usePostgres } from "../../support/postgres.ts";

const postgres = usePostgres();
const QUICK = { source: "test", expireSeconds: 5, heartbeatSeconds: 10 };
const POLICY = { maxAttempts: 3, backoffMs: 10, maxBackoffMs: 10 };

/** Counts the confirmations the ledger itself writes to `store`. */
function countConfirms(store: DeliveryStore): () => number {
  let confirms = 0;
  const confirm = store.confirm.bind(store);
  store.confirm = (id, possiblyRepeated) => {
    confirms++;
    return confirm(id, possiblyRepeated);
  };
  return () => confirms;
}

/** A sender that sends each record once `gate()` settles, and records what it sent. */
function gatedSender(gate: () => Promise<unknown>): DeliverySender & { sent: string[] } {
  const sent: string[] = [];
  return {
    sent,
    classify: (error) => ({ kind: "permanent", reason: String(error) }),
    async send(record, partSent) {
      await gate();
      sent.push(record.text);
      await partSent(1, 1);
    },
  };
}

async function openLedger(url: string, sender: DeliverySender): Promise<DeliveryLedger> {
  const ledger = new DeliveryLedger({ store: await openPostgresDeliveryStore(url), source: "telegram-1", sender, policy: POLICY, exclusive: false, sweepMs: 60_000 });
  await ledger.start();
  return ledger;
}

/** The channel's send: the reply goes to the ledger under the key the queue gives it. */
function deliverTo(ledger: DeliveryLedger) {
  return async (message: Envelope, recorded?: RecordedOrigin) => {
    await ledger.enqueue({ chatId: message.chatId, sessionId: message.sessionId ?? "?", text: message.content, inbound: [], ...(recorded?.key ? { key: recorded.key } : {}) }, { handoff: recorded?.handoff });
  };
}

describe("queued turns and the delivery ledger", () => {
  it("a re-run job's reply that the ledger already took (the process died before the queue recorded it) is not sent again", async () => {
    const url = await (await postgres()).createDatabase();
    const queue = await ClusterQueue.open({ url, ...QUICK });
    const firstSender = recordingSender();
    const first = await openLedger(url, firstSender);
    const againSender = recordingSender();
    const again = await openLedger(url, againSender);
    try {
      const key = "telegram:1:5";
      const job = (retryCount: number): QueuedJob => ({ id: "00000000-0000-8000-8000-000000000005", retryCount, payload: { key, session: "telegram:1", item: {} } });
      // The first run: its reply reaches the ledger, which sends it; the process dies before
      // its turn ends (the queue is not told: no turns.run completion).
      // (startWithinMs: its job's wait for the turn must not hold the test open once it ends.)
      const firstTurns = new QueuedTurns({ queue, startWithinMs: 1000 });
      let handed: (() => void) | null = null;
      const firstReplied = new Promise<void>((resolve) => (handed = resolve));
      const firstJob = job(0);
      const dying = firstTurns.run(firstJob, () =>
        firstTurns.handOver(
          new ChannelMessage({ sessionId: "telegram:1", channel: "telegram", chatId: "1", content: "hello", isActive: true, outputChannel: "telegram" }),
          turnRunner(async (message) => {
            await firstTurns.sendRecorded(toEnvelope({ content: "the answer", channel: "telegram", chatId: "1", sessionId: message.sessionId }), deliverTo(first), message);
            handed?.();
            await new Promise(() => undefined); // killed here: the turn never ends
          }),
          firstJob.payload.item,
        ),
      );
      void dying.catch(() => undefined);
      await firstReplied;
      await first.drain(5000);
      assert.deepEqual(firstSender.sent, ["the answer"]);

      // The job runs again (another process): the model answers again, the same reply index.
      const turns = new QueuedTurns({ queue });
      const secondJob = job(1);
      await turns.run(secondJob, () =>
        turns.handOver(
          new ChannelMessage({ sessionId: "telegram:1", channel: "telegram", chatId: "1", content: "hello", isActive: true, outputChannel: "telegram" }),
          turnRunner(async (message) => {
            await turns.sendRecorded(toEnvelope({ content: "the answer, worded anew", channel: "telegram", chatId: "1", sessionId: message.sessionId }), deliverTo(again), message);
            await turns.sendRecorded(toEnvelope({ content: "a second reply", channel: "telegram", chatId: "1", sessionId: message.sessionId }), deliverTo(again), message);
          }),
          secondJob.payload.item,
        ),
      );
      await again.drain(5000);
      assert.deepEqual(againSender.sent, ["a second reply"], "reply 0 was sent by the first run's ledger record; only reply 1 is new");

      // A process that died before sending: its record waits under its lease. The re-run's
      // reply takes that copy over and sends it now (the chat's order holds), not its new wording.
      const deadStore = await openPostgresDeliveryStore(url);
      await deadStore.record("a dead process", [{ source: "telegram-1", chatId: "2", sessionId: "telegram:2", text: "the answer to 6", inbound: [], key: "telegram:1:6#0" }]);
      await deadStore.close();
      const rerun = new QueuedTurns({ queue });
      const job6: QueuedJob = { id: "00000000-0000-8000-8000-000000000006", retryCount: 1, payload: { key: "telegram:1:6", session: "telegram:2", item: {} } };
      await rerun.run(job6, () =>
        rerun.handOver(
          new ChannelMessage({ sessionId: "telegram:2", channel: "telegram", chatId: "2", content: "hi", isActive: true, outputChannel: "telegram" }),
          turnRunner(async (message) => {
            await rerun.sendRecorded(toEnvelope({ content: "the answer to 6, worded anew", channel: "telegram", chatId: "2", sessionId: message.sessionId }), deliverTo(again), message);
          }),
          job6.payload.item,
        ),
      );
      await again.drain(5000);
      assert.deepEqual(againSender.sent, ["a second reply", "the answer to 6"]);
    } finally {
      await first.close();
      await again.close();
      await queue.close();
    }
  });

  it("a turn's last reply, sent after the turn ended, is confirmed by its job's completion, not by the ledger; one sent while the turn runs, by the ledger", async () => {
    const url = await (await postgres()).createDatabase();
    const queue = await ClusterQueue.open({ url, ...QUICK });
    const store = await openPostgresDeliveryStore(url);
    const ledgerConfirms = countConfirms(store);
    // Each send waits for its release: after the turn ended for the first job, at once for the second.
    const release = Promise.withResolvers<void>();
    const sender = gatedSender(() => release.promise);
    const sent = sender.sent;
    const ledger = new DeliveryLedger({ store, source: "telegram-1", sender, policy: POLICY, exclusive: false, sweepMs: 60_000 });
    await ledger.start();
    const runTurn = async (turns: QueuedTurns, job: QueuedJob, text: string, beforeEnd: () => Promise<void>, ended: () => void) =>
      turns.run(job, () =>
        turns.handOver(
          new ChannelMessage({ sessionId: job.payload.session, channel: "telegram", chatId: "1", content: "hi", isActive: true, outputChannel: "telegram" }),
          turnRunner(async (message) => {
            await turns.sendRecorded(toEnvelope({ content: text, channel: "telegram", chatId: "1", sessionId: message.sessionId }), deliverTo(ledger), message);
            await beforeEnd();
          }, ended),
          job.payload.item,
        ),
      );
    try {
      const turns = new QueuedTurns({ queue });
      const job = (n: number): QueuedJob => ({ id: `00000000-0000-8000-8000-00000000001${n}`, retryCount: 0, payload: { key: `telegram:1:1${n}`, session: "telegram:1", item: {} } });
      await runTurn(turns, job(0), "after the turn", async () => undefined, () => release.resolve());
      assert.deepEqual(sent, ["after the turn"]);
      assert.equal(ledgerConfirms(), 0, "the completion confirmed it");
      assert.deepEqual(await store.list(["pending", "sent", "dead"]), [], "its record is gone");

      // The turn goes on until its reply was sent: the turn may send more, so the ledger confirms it.
      await runTurn(turns, job(1), "during the turn", () => ledger.drain(5000), () => undefined);
      assert.deepEqual(sent, ["after the turn", "during the turn"]);
      assert.equal(ledgerConfirms(), 1);
      assert.deepEqual(await store.list(["pending", "sent", "dead"]), [], "confirmed either way");
    } finally {
      await ledger.close();
      await queue.close();
    }
  });

  it("on graphile-worker, the job's completion statement confirms the turn's last reply (the ledger does not), and the job is gone", async () => {
    const url = await (await postgres()).createDatabase();
    const queue = await openInboundQueue("graphile", { url, ...QUICK });
    const store = await openPostgresDeliveryStore(url);
    const ledgerConfirms = countConfirms(store);
    const ended = Promise.withResolvers<void>();
    const sender = gatedSender(() => ended.promise); // sent once the turn is over: the reply is the turn's last
    const sent = sender.sent;
    const ledger = new DeliveryLedger({ store, source: "telegram-1", sender, policy: POLICY, exclusive: false, sweepMs: 60_000 });
    await ledger.start();
    try {
      const turns = new QueuedTurns({ queue });
      const handler = turnRunner(async (message) => {
        await turns.sendRecorded(toEnvelope({ content: "the answer", channel: "telegram", chatId: "1", sessionId: message.sessionId }), deliverTo(ledger), message);
      }, () => ended.resolve());
      await queue.work(2, (job) => turns.run(job, () => turns.handOver(new ChannelMessage({ sessionId: job.payload.session, channel: "telegram", chatId: "1", content: "hi", isActive: true, outputChannel: "telegram" }), handler, job.payload.item)), async () => undefined);
      const [accepted] = await queue.accept([{ key: "telegram:1:20", session: "telegram:1", item: { text: "hi" }, order: 20 }]);
      assert.equal(accepted, "telegram:1:20");
      await eventually(() => (sent.length === 1 && turns.size === 0 ? true : undefined), "the reply to be sent and the job to end");
      assert.deepEqual(sent, ["the answer"]);
      assert.deepEqual(await store.list(["pending", "sent", "dead"]), [], "the reply's record is gone");
      assert.equal(ledgerConfirms(), 0, "confirmed by the job's completion");
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query<{ jobs: string }>("SELECT count(*) AS jobs FROM graphile_worker._private_jobs");
        assert.equal(rows[0]?.jobs, "0");
        // The ledger's key is the reply's only record: the queue keeps no table of replies of its own.
        const keys = await client.query<{ key: string }>("SELECT key FROM bub_delivery_keys");
        assert.deepEqual(keys.rows.map((row) => row.key), ["telegram:1:20#0"]);
        const table = await client.query<{ replies: string | null }>("SELECT to_regclass('bub_queue_replies')::text AS replies");
        assert.equal(table.rows[0]?.replies, null);
      } finally {
        await client.end();
      }
    } finally {
      await ledger.close();
      await queue.close();
    }
  });

  it("a last reply whose first try's connection died is kept as possibly repeated by the ledger, not deleted by the job's completion", async () => {
    const url = await (await postgres()).createDatabase();
    const queue = await ClusterQueue.open({ url, ...QUICK });
    const store = await openPostgresDeliveryStore(url);
    const ended = Promise.withResolvers<void>();
    let tries = 0;
    const sender: DeliverySender = {
      classify: (error) => ({ kind: "unknown", reason: String(error) }),
      async send(_record, partSent) {
        await ended.promise;
        if (++tries === 1) throw new Error("socket hang up");
        await partSent(1, 1);
      },
    };
    const ledger = new DeliveryLedger({ store, source: "telegram-1", sender, policy: POLICY, exclusive: false, sweepMs: 60_000 });
    await ledger.start();
    try {
      const turns = new QueuedTurns({ queue });
      const job: QueuedJob = { id: "00000000-0000-8000-8000-000000000030", retryCount: 0, payload: { key: "telegram:1:30", session: "telegram:1", item: {} } };
      await turns.run(job, () =>
        turns.handOver(
          new ChannelMessage({ sessionId: "telegram:1", channel: "telegram", chatId: "1", content: "hi", isActive: true, outputChannel: "telegram" }),
          async (input) => {
            const message = toEnvelope(input);
            void (async () => {
              await message.lifespan?.enter();
              await turns.sendRecorded(toEnvelope({ content: "the answer", channel: "telegram", chatId: "1", sessionId: message.sessionId }), deliverTo(ledger), message);
              await message.lifespan?.exit();
              message.lifespan?.settled?.("done");
              ended.resolve();
            })();
          },
          job.payload.item,
        ),
      );
      await ledger.drain(5000);
      assert.equal(tries, 2);
      assert.deepEqual((await store.list(["sent"])).map((record) => [record.text, record.possiblyRepeated]), [["the answer", true]]);
    } finally {
      await ledger.close();
      await queue.close();
    }
  });
});
