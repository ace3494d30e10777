/**
 * Queued turns against a real PostgreSQL: replies handed over under their keys, one at a
 * time per turn, the retry marked on the message, and steering a turn that runs behind another
 * queue instance (another gateway process) with a message this one took.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import pg from "pg";
import { ChannelMessage } from "../../../src/channels/message.ts";
import { createSteeringInbox } from "../../../src/channels/steering.ts";
import { openInboundQueue } from "../../../src/channels/cluster/open.ts";
import type { QueueEngine } from "../../../src/channels/cluster/schema.ts";
import { ClusterQueue, type QueuedJob } from "../../../src/channels/cluster/queue.ts";
import { QueuedTurns, type RecordedOrigin, type SteeringFramework } from "../../../src/channels/cluster/turns.ts";
import { toEnvelope, type Envelope } from "../../../src/kernel/envelope.ts";
import { eventually } from "../../support/eventually.ts";
import { turnRunner } from "./turn-runner.ts";
import { usePostgres } from "../../support/postgres.ts";

const postgres = usePostgres();
const QUICK = { source: "test", expireSeconds: 5, heartbeatSeconds: 10 };

function chatMessage(session: string, text: string): ChannelMessage {
  return new ChannelMessage({ sessionId: session, channel: "telegram", chatId: session, content: text, isActive: true, outputChannel: "telegram" });
}

function reply(text: string): Envelope {
  return toEnvelope({ content: text, channel: "telegram", chatId: "1" });
}


describe("queued turns", () => {
  it("hands each reply to the ledger under its key (message key and index), reads and records nothing of its own, and marks the retry", async () => {
    const url = await (await postgres()).createDatabase();
    const queue = await ClusterQueue.open({ url, ...QUICK });
    try {
      const turns = new QueuedTurns({ queue });
      const sent: [string, string | undefined][] = [];
      let context: Record<string, unknown> = {};
      const deliver = async (message: Envelope, recorded?: RecordedOrigin) => void sent.push([message.content, recorded?.key]);
      const handler = turnRunner(async (message) => {
        context = message.context;
        await turns.sendRecorded(reply("first part"), deliver, message);
        await turns.sendRecorded(reply("second part"), deliver, message);
      });
      // A run again (its process died): every reply goes to the ledger, which drops those it had.
      const job: QueuedJob = { id: "00000000-0000-8000-8000-000000000005", retryCount: 1, payload: { key: "telegram:1:5", session: "telegram:1", item: {} } };
      await turns.run(job, () => turns.handOver(chatMessage("telegram:1", "hello"), handler, job.payload.item));
      assert.deepEqual(sent, [["first part", "telegram:1:5#0"], ["second part", "telegram:1:5#1"]]);
      assert.equal(context.retried_after_restart, true);
      // Sends outside a queued turn go straight out, with no key.
      await turns.sendRecorded(reply("a notice"), deliver);
      assert.deepEqual(sent[2], ["a notice", undefined]);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query<{ replies: string | null }>("SELECT to_regclass('bub_queue_replies')::text AS replies");
        assert.equal(rows[0]?.replies, null, "no table of replies beside the ledger's keys");
      } finally {
        await client.end();
      }
    } finally {
      await queue.close();
    }
  });

  it("tells a first run's turn where the queue saw its tape end, and a retry's turn nothing (its first run may have written since)", async () => {
    const url = await (await postgres()).createDatabase();
    const queue = await ClusterQueue.open({ url, ...QUICK });
    try {
      const turns = new QueuedTurns({ queue });
      const told: unknown[] = [];
      const handler = turnRunner(async (message) => void told.push(message.tapeEnd));
      const payload = { key: "telegram:1:7", session: "telegram:1", item: {}, tape: "ws__t", tapeEnd: { id: 4, date: "2026-12-02T00:00:00.000+00:00" } };
      for (const retryCount of [0, 1]) {
        const job: QueuedJob = { id: `00000000-0000-8000-8000-00000000000${7 + retryCount}`, retryCount, payload: { ...payload, item: {} } };
        await turns.run(job, () => turns.handOver(chatMessage("telegram:1", "hello"), handler, job.payload.item));
      }
      assert.deepEqual(told, [{ tape: "ws__t", id: 4, date: "2026-12-02T00:00:00.000+00:00" }, undefined]);
    } finally {
      await queue.close();
    }
  });

  for (const engine of ["pg-boss", "graphile"] satisfies QueueEngine[])
  it(`steers a turn running behind one queue with a message the other took (${engine}); one the turn did not read, or that came after it, runs as the next turn`, async () => {
    const url = await (await postgres()).createDatabase();
    const [runner, taker] = await Promise.all([openInboundQueue(engine, { url, ...QUICK }), openInboundQueue(engine, { url, ...QUICK })]);
    try {
      const inbox = createSteeringInbox();
      const framework: SteeringFramework = { steeringInbox: inbox, admitMessage: async () => ({ action: "steer", reason: "test" }) };
      const turns = new QueuedTurns({ queue: runner, framework });
      const ran: string[] = [];
      const read: string[] = [];
      let release = Promise.withResolvers<void>();
      let reading = true;
      const handler = turnRunner(async (message) => {
        ran.push(message.content);
        // The turn reads its steering inbox until it is told to end.
        const ends = release.promise;
        const readsSteering = reading;
        for (;;) {
          const done = await Promise.race([ends.then(() => true), new Promise<false>((resolve) => setTimeout(() => resolve(false), 20))]);
          if (readsSteering) for (const steered of inbox.drainMessages({ sessionId: message.sessionId ?? "" })) read.push(steered.content);
          if (done) return;
        }
      });
      const parse = (item: unknown) => {
        const text = typeof item === "object" && item !== null && "text" in item ? String(item.text) : "";
        return turns.handOver(chatMessage("telegram:9", text), handler, item);
      };
      const announced: string[] = [];
      await runner.listen((notice) => {
        announced.push(notice.id);
        void turns.offerSteering(notice, parse);
      });
      await runner.work(2, (job) => turns.run(job, () => parse(job.payload.item)), async () => undefined);

      await taker.accept([{ key: "k:1", session: "telegram:9", item: { text: "write a poem" }, order: 1 }]);
      await eventually(() => (ran.length === 1 ? true : undefined), "the first turn to run");
      await taker.accept([{ key: "k:2", session: "telegram:9", item: { text: "make it rhyme" }, order: 2 }]);
      await eventually(() => (read.length === 1 ? true : undefined), "the steering message to reach the running turn");
      assert.deepEqual(read, ["make it rhyme"]);
      release.resolve();
      // The steered message was answered by that turn: it never runs as a turn of its own.
      await eventually(() => (turns.size === 0 ? true : undefined), "the turn's job to end");
      assert.equal(announced.length, 2);
      assert.equal(await runner.waiting(announced[1] ?? ""), null);

      // A message that arrives after the turn stopped reading runs next, as its own turn.
      release = Promise.withResolvers<void>();
      await taker.accept([{ key: "k:3", session: "telegram:9", item: { text: "thanks" }, order: 3 }]);
      await eventually(() => (ran.length === 2 ? true : undefined), "the next turn to run");
      release.resolve();
      await eventually(() => (turns.size === 0 ? true : undefined), "the job to end");
      assert.deepEqual(ran, ["write a poem", "thanks"]);

      // Steered into a turn that ends without reading it: taken back out of the inbox, it runs next.
      reading = false;
      release = Promise.withResolvers<void>();
      await taker.accept([{ key: "k:4", session: "telegram:9", item: { text: "summarise" }, order: 4 }]);
      await eventually(() => (ran.length === 3 ? true : undefined), "the fourth turn to run");
      await taker.accept([{ key: "k:5", session: "telegram:9", item: { text: "in French" }, order: 5 }]);
      await eventually(() => (inbox.messageCount({ sessionId: "telegram:9" }) === 1 ? true : undefined), "the message to be steered");
      reading = true;
      const next = release;
      release = Promise.withResolvers<void>();
      next.resolve();
      await eventually(() => (ran.length === 4 ? true : undefined), "the unread message to run as its own turn");
      release.resolve();
      await eventually(() => (turns.size === 0 ? true : undefined), "the last job to end");
      assert.deepEqual(ran, ["write a poem", "thanks", "summarise", "in French"]);
      assert.deepEqual(read, ["make it rhyme"]);
    } finally {
      await Promise.all([runner.close(), taker.close()]);
    }
  });

  it("sends the replies of turns of different sessions concurrently, one at a time and in order within a turn", async () => {
    const url = await (await postgres()).createDatabase();
    const queue = await ClusterQueue.open({ url, ...QUICK });
    try {
      const turns = new QueuedTurns({ queue });
      // Each delivery waits until it is released: a send held up in one session must not hold up another's.
      const inFlight: string[] = [];
      const delivered: string[] = [];
      const gates = new Map<string, PromiseWithResolvers<void>>();
      const deliver = async (message: Envelope) => {
        inFlight.push(message.content);
        const gate = Promise.withResolvers<void>();
        gates.set(message.content, gate);
        await gate.promise;
        delivered.push(message.content);
      };
      const handler = turnRunner(async (message) => {
        await Promise.all([turns.sendRecorded(reply(`${message.content} 1`), deliver, message), turns.sendRecorded(reply(`${message.content} 2`), deliver, message)]);
      });
      const runs = ["a", "b"].map((chat, n) => {
        const job: QueuedJob = { id: `00000000-0000-8000-8000-00000000000${n}`, retryCount: 0, payload: { key: `telegram:${chat}:1`, session: `telegram:${chat}`, item: {} } };
        return turns.run(job, () => turns.handOver(chatMessage(`telegram:${chat}`, chat), handler, job.payload.item));
      });
      // Both sessions' first replies are on their way at once; neither turn's second reply left before its first.
      await eventually(() => (inFlight.length === 2 ? true : undefined), "a reply of each session in flight");
      assert.deepEqual(inFlight.sort(), ["a 1", "b 1"]);
      gates.get("b 1")?.resolve();
      await eventually(() => (inFlight.length === 3 ? true : undefined), "session b's second reply to leave");
      assert.equal(inFlight[2], "b 2");
      gates.get("b 2")?.resolve();
      gates.get("a 1")?.resolve();
      await eventually(() => (gates.has("a 2") ? true : undefined), "session a's second reply to leave");
      gates.get("a 2")?.resolve();
      await Promise.all(runs);
      assert.deepEqual(delivered, ["b 1", "b 2", "a 1", "a 2"]);
    } finally {
      await queue.close();
    }
  });
});
