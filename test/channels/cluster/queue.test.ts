import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import pg from "pg";
import { STEER_BATCH, STEER_CHANNEL, type SteerNotice } from "../../../src/channels/cluster/job.ts";
import { openQueueAdmin } from "../../../src/channels/cluster/admin.ts";
import type { InboundQueue, QueuedJob } from "../../../src/channels/cluster/inbound-queue.ts";
import { openInboundQueue } from "../../../src/channels/cluster/open.ts";
import type { QueueEngine } from "../../../src/channels/cluster/schema.ts";
import { eventually } from "../../support/eventually.ts";
import { usePostgres } from "../../support/postgres.ts";

const postgres = usePostgres();

for (const engine of ["pg-boss", "graphile"] satisfies QueueEngine[]) {
  /** Short limits: pg-boss expires a dead process's job after 2 s; graphile-worker's liveness gives up on it after 2 s. */
  const QUICK = { expireSeconds: 2, heartbeatSeconds: engine === "graphile" ? 2 : 10 };
async function openQueue(url: string, source = "test"): Promise<InboundQueue> {
  return openInboundQueue(engine, { url, source, ...QUICK });
}

function inbound(session: string, n: number) {
  return { key: `${session}:${n}`, session, item: { n }, order: n };
}

/** Starts a process that takes one job and hangs; resolves with the job it took and a way to kill it. */
async function hungWorker(url: string): Promise<{ id: string; retryCount: number; kill: () => Promise<void> }> {
  // Without the test runner's variable, which would make the child report to it instead of printing.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const child = spawn(process.execPath, [join(import.meta.dirname, "hung-worker.ts"), url, "test", engine], { stdio: ["ignore", "pipe", "inherit"], env });
  after(() => child.kill("SIGKILL"));
  let text = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => (text += chunk));
  const took = await eventually(() => /took (\S+) (\d+)/.exec(text) ?? undefined, "the worker to take a job", 30_000);
  return {
    id: took[1] ?? "",
    retryCount: Number(took[2]),
    kill: async () => {
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
    },
  };
}

describe(`the shared inbound queue on ${engine}`, () => {
  it("runs one job per session at a time, in arrival order, across two workers", async () => {
    const url = await (await postgres()).createDatabase();
    const [first, second] = await Promise.all([openQueue(url), openQueue(url)]);
    try {
      const sessions = ["telegram:1", "telegram:2", "telegram:3"];
      const order = new Map<string, number[]>(sessions.map((session) => [session, []]));
      const running = new Map<string, number>();
      const byWorker = [0, 0];
      let overlaps = 0;
      const handler = (worker: number) => async (job: QueuedJob) => {
        byWorker[worker] = (byWorker[worker] ?? 0) + 1;
        const { session } = job.payload;
        if ((running.get(session) ?? 0) > 0) overlaps++;
        running.set(session, (running.get(session) ?? 0) + 1);
        for (let step = 0; step < 5; step++) await new Promise((resolve) => setImmediate(resolve));
        order.get(session)?.push(Number(job.payload.key.split(":").at(-1)));
        running.set(session, (running.get(session) ?? 1) - 1);
      };
      await first.work(4, handler(0), async () => undefined);
      await second.work(4, handler(1), async () => undefined);
      for (let n = 0; n < 6; n++) await (n % 2 === 0 ? first : second).accept(sessions.slice(0, 2).map((session) => inbound(session, n)));
      // A whole burst of one session taken in one call (one getUpdates answer) keeps its order too.
      await first.accept([0, 1, 2, 3, 4, 5].map((n) => inbound("telegram:3", n)));
      await eventually(() => ([...order.values()].every((done) => done.length === 6) ? true : undefined), "every job to run", 30_000);
      for (const session of sessions) assert.deepEqual(order.get(session), [0, 1, 2, 3, 4, 5], session);
      assert.equal(overlaps, 0);
      assert.equal((byWorker[0] ?? 0) + (byWorker[1] ?? 0), 18);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  it("announces the messages of one accept in one steering notification, each to the listener", async () => {
    const url = await (await postgres()).createDatabase();
    const queue = await openQueue(url);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const raw: string[] = [];
      client.on("notification", (message) => {
        if (message.channel === STEER_CHANNEL) raw.push(message.payload ?? "");
      });
      await client.query(`LISTEN ${STEER_CHANNEL}`);
      // Notifications reach a listener in commit order: once a marker sent after an accept arrived, so did the accept's.
      const upTo = async (marker: string) => {
        await client.query("SELECT pg_notify($1, $2)", [STEER_CHANNEL, marker]);
        await eventually(() => (raw.includes(marker) ? true : undefined), `the marker ${marker}`);
        return raw.filter((payload) => !payload.startsWith("marker")).length;
      };
      const heard: SteerNotice[] = [];
      await queue.listen((notice) => heard.push(notice));
      const messages = [inbound("telegram:1", 1), inbound("telegram:2", 2), inbound("telegram:1", 3)];
      // Twice STEER_BATCH and one more: three notifications.
      const many = Array.from({ length: 2 * STEER_BATCH + 1 }, (_, n) => inbound(`telegram:${100 + n}`, 100 + n));
      assert.deepEqual((await queue.accept(messages)).sort(), messages.map((message) => message.key).sort());
      await eventually(() => (heard.length === 3 ? true : undefined), "the three messages to be heard");
      assert.equal(await upTo("marker 1"), 1, "one notification for the accept");
      assert.deepEqual(heard.map((notice) => notice.session).sort(), ["telegram:1", "telegram:1", "telegram:2"]);
      assert.equal(new Set(heard.map((notice) => notice.id)).size, 3);
      for (const notice of heard) assert.equal((await queue.waiting(notice.id))?.session, notice.session);
      await queue.accept(many);
      await eventually(() => (heard.length === 3 + many.length ? true : undefined), "every message of the big accept to be heard");
      assert.equal(await upTo("marker 2"), 4);
      assert.deepEqual(heard.slice(3).map((notice) => notice.session).sort(), many.map((message) => message.session).sort());
      // A notification of one message, as an older bub sends it, is still heard.
      await client.query("SELECT pg_notify($1, $2)", [STEER_CHANNEL, JSON.stringify({ queue: queue.queue, id: "7", session: "telegram:7" })]);
      await eventually(() => (heard.length === 4 + many.length ? true : undefined), "the older notification to be heard");
      assert.deepEqual(heard.at(-1), { queue: queue.queue, id: "7", session: "telegram:7" });
    } finally {
      await client.end();
      await queue.close();
    }
  });

  it("lets a turn go after expire_seconds: the message runs again, before its chat's next one", { timeout: 90_000 }, async () => {
    const url = await (await postgres()).createDatabase();
    const queue = await openQueue(url);
    try {
      const ran: [string, number][] = [];
      await queue.work(
        2,
        (job) => {
          ran.push([job.payload.key, job.retryCount]);
          // The first run of the first message hangs: its turn never ends.
          return ran.length === 1 ? new Promise<void>(() => undefined) : Promise.resolve();
        },
        async () => undefined,
      );
      await queue.accept([inbound("telegram:5", 1), inbound("telegram:5", 2)]);
      await eventually(() => (ran.length === 3 ? true : undefined), "the expired message and the next to run", 60_000);
      assert.deepEqual(ran, [
        ["telegram:5:1", 0],
        ["telegram:5:1", 1],
        ["telegram:5:2", 0],
      ]);
    } finally {
      await queue.close();
    }
  });

  it("queues a message once however often it is sent", async () => {
    const url = await (await postgres()).createDatabase();
    const queue = await openQueue(url);
    try {
      const announced: string[] = [];
      await queue.listen((notice) => void announced.push(notice.id));
      assert.deepEqual(await queue.accept([inbound("telegram:1", 1), inbound("telegram:1", 2)]), ["telegram:1:1", "telegram:1:2"]);
      assert.deepEqual(await queue.accept([inbound("telegram:1", 2), inbound("telegram:1", 3)]), ["telegram:1:3"]);
      // Each new message announced once, as its job: the second one's job waits, with its message.
      await eventually(() => (announced.length === 3 ? true : undefined), "the three notices");
      assert.equal(await queue.waiting(announced[1] ?? "").then((payload) => payload?.key), "telegram:1:2");
    } finally {
      await queue.close();
    }
  });

  it("retries once the job of a process killed mid-turn, then dead-letters it; bub queue retry brings it back", async () => {
    const url = await (await postgres()).createDatabase();
    const queue = await openQueue(url);
    try {
      await queue.accept([inbound("telegram:7", 1), inbound("telegram:7", 2)]);
      const first = await hungWorker(url);
      assert.equal(first.retryCount, 0);
      await first.kill();
      // This process supervises: the job expires and the next worker takes it again, as a retry.
      const second = await hungWorker(url);
      assert.deepEqual([second.id, second.retryCount], [first.id, 1]);
      await second.kill();
      // Failed twice: dead-lettered, and the session's next message is no longer held back.
      const ran: QueuedJob[] = [];
      await queue.work(2, async (job) => void ran.push(job), async () => undefined);
      await eventually(() => (ran.length === 1 ? true : undefined), "the session's next message to run", 30_000);
      assert.equal(ran[0]?.payload.key, "telegram:7:2");
      const admin = await openQueueAdmin(url);
      try {
        const letters = await admin.deadLetters();
        assert.deepEqual(
          letters.map((letter) => [letter.queue, letter.session, letter.key]),
          [[queue.queue, "telegram:7", "telegram:7:1"]],
        );
        assert.deepEqual(
          (await admin.counts()).map((counts) => counts.deadLetters),
          [1],
        );
        assert.equal(await admin.retry([letters[0]?.id ?? ""]), 1);
        await eventually(() => (ran.length === 2 ? true : undefined), "the retried message to run", 30_000);
        // pg-boss queues it as a new job; graphile-worker gives it a third attempt, so it runs marked as a retry.
          assert.deepEqual([ran[1]?.payload.key, ran[1]?.retryCount], ["telegram:7:1", engine === "graphile" ? 2 : 0]);
        assert.deepEqual(await admin.deadLetters(), []);
      } finally {
        await admin.close();
      }
    } finally {
      await queue.close();
    }
  });
});
}
