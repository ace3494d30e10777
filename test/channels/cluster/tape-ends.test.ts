// The shared queue on graphile-worker, with the tapes in its database: a message that is the
// next of its session gets where its session tape ends in its payload; one queued behind
// another of its session gets nothing (its turn reads the tape).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { InboundQueue } from "../../../src/channels/cluster/inbound-queue.ts";
import type { JobPayload } from "../../../src/channels/cluster/job.ts";
import { openInboundQueue } from "../../../src/channels/cluster/open.ts";
import { entries } from "../../../src/tape/entry.ts";
import { createPostgresTapeStore } from "../../../src/tape/postgres/lazy-store.ts";
import { eventually } from "../../support/eventually.ts";
import { usePostgres } from "../../support/postgres.ts";

const postgres = usePostgres();

function inbound(session: string, n: number) {
  return { key: `${session}:${n}`, session, item: { n }, order: n, tape: `ws__${session}` };
}

/** The payloads of the jobs announced on `queue`, by key, once `count` were. */
async function announced(queue: InboundQueue, accept: () => Promise<unknown>, count: number): Promise<Map<string, JobPayload>> {
  const ids: string[] = [];
  await queue.listen((notice) => void ids.push(notice.id));
  await accept();
  await eventually(() => (ids.length === count ? true : undefined), `${count} notices`);
  const payloads = await Promise.all(ids.map((id) => queue.waiting(id)));
  return new Map(payloads.filter((payload) => payload !== null).map((payload) => [payload.key, payload]));
}

describe("tape ends on the shared queue (graphile-worker)", () => {
  it("tells the next message of each session where its tape ends, and no message queued behind another", async () => {
    const url = await (await postgres()).createDatabase();
    const tapes = createPostgresTapeStore({ url });
    const stored = await tapes.appendBatch("ws__telegram:1", [entries.anchor("session/start"), entries.message({ role: "user", content: "hi" })]);
    const last = stored.at(-1);
    assert.ok(last);
    const queue = await openInboundQueue("graphile", { url, source: "test", expireSeconds: 60, heartbeatSeconds: 2, tapeEnds: true });
    try {
      const payloads = await announced(queue, () => queue.accept([inbound("telegram:1", 1), inbound("telegram:2", 2), inbound("telegram:1", 3)]), 3);
      assert.deepEqual(payloads.get("telegram:1:1")?.tapeEnd, { id: last.id, date: last.date }, "where the written tape ends");
      assert.deepEqual(payloads.get("telegram:2:2")?.tapeEnd, { id: 0, date: "" }, "a tape never written: empty");
      assert.equal(payloads.get("telegram:1:3")?.tapeEnd, undefined, "behind the first of its session in the same accept");
      assert.deepEqual(payloads.get("telegram:1:3")?.item, { n: 3 }, "the message itself as sent");

      // Its session still has a message queued: a later accept tells it nothing either.
      const later = await announced(queue, () => queue.accept([inbound("telegram:1", 4), inbound("telegram:3", 5)]), 2);
      assert.equal(later.get("telegram:1:4")?.tapeEnd, undefined);
      assert.deepEqual(later.get("telegram:3:5")?.tapeEnd, { id: 0, date: "" });
    } finally {
      await queue.close();
      await tapes.close();
    }
  });

  it("without tape ends (tapes elsewhere), queues the messages as they are", async () => {
    const url = await (await postgres()).createDatabase();
    const queue = await openInboundQueue("graphile", { url, source: "test", expireSeconds: 60, heartbeatSeconds: 2 });
    try {
      const payloads = await announced(queue, () => queue.accept([inbound("telegram:1", 1)]), 1);
      assert.equal(payloads.get("telegram:1:1")?.tapeEnd, undefined);
    } finally {
      await queue.close();
    }
  });
});
