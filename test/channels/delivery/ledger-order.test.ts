import assert from "node:assert/strict";
import { describe, it } from "node:test";
import pg from "pg";
import { DeliveryLedger } from "../../../src/channels/delivery/ledger.ts";
import { recordingSender, until } from "./support.ts";
import { openPostgresDeliveryStore } from "../../../src/channels/delivery/postgres-store.ts";
import { usePostgres } from "../../support/postgres.ts";

const postgres = usePostgres();

describe("the delivery ledger on a database several gateways share", () => {
  it("keeps a chat's order across gateways: a reply waits behind an older one of a dead gateway until it is taken over and sent", async () => {
    const url = await (await postgres()).createDatabase();
    const dead = await openPostgresDeliveryStore(url);
    // A gateway recorded a reply for chat 7 and was killed before sending it (its lease still runs).
    await dead.record("killed-gateway", [{ source: "telegram-1", chatId: "7", sessionId: "telegram:7", text: "reply 1", inbound: [] }]);
    await dead.close();
    const sender = recordingSender();
    const ledger = new DeliveryLedger({ store: await openPostgresDeliveryStore(url), source: "telegram-1", sender, policy: { maxAttempts: 3, backoffMs: 10, maxBackoffMs: 100 }, exclusive: false, sweepMs: 50 });
    await ledger.start();
    try {
      await ledger.enqueue({ chatId: "7", sessionId: "telegram:7", text: "reply 2", inbound: [] });
      await ledger.enqueue({ chatId: "8", sessionId: "telegram:8", text: "another chat", inbound: [] });
      await until(() => sender.sent.includes("another chat"), "the other chat's reply");
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.deepEqual(sender.sent, ["another chat"], "chat 7 waits while the older reply's lease runs");
      // The dead gateway's lease runs out: the sweep takes its reply over and sends both in order.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query("UPDATE bub_deliveries SET lease_until = 0 WHERE owner = 'killed-gateway'");
      await client.end();
      await until(() => sender.sent.length === 3, "both replies of chat 7");
      assert.deepEqual(sender.sent, ["another chat", "reply 1", "reply 2"]);
    } finally {
      await ledger.close();
    }
  });
});
