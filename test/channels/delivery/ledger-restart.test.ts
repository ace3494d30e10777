import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { DeliveryLedger } from "../../../src/channels/delivery/ledger.ts";
import { recordingSender } from "./support.ts";
import { openSqliteDeliveryStore } from "../../../src/channels/delivery/sqlite-store.ts";
import { tempDir } from "../../support/temp.ts";

const policy = { maxAttempts: 3, backoffMs: 10, maxBackoffMs: 100 };

describe("the delivery ledger after a restart", () => {
  it("names the updates of the replies it took over as answered after it sent them (their turns must not run again)", async () => {
    const dir = await tempDir("bub-ledger-restart-");
    try {
      const path = join(dir.path, "delivery.sqlite3");
      // A gateway recorded the reply to update 61 and was killed before it marked the update done.
      const killed = openSqliteDeliveryStore(path);
      await killed.record("killed-gateway", [{ source: "telegram-1", chatId: "60", sessionId: "telegram:60", text: "re: msg-60", inbound: [61] }]);
      await killed.close();
      const sender = recordingSender();
      const ledger = new DeliveryLedger({ store: openSqliteDeliveryStore(path), source: "telegram-1", sender, policy, exclusive: true });
      await ledger.start();
      try {
        await ledger.drain(10_000);
        assert.deepEqual(sender.sent, ["re: msg-60"], "the reply taken over is sent");
        // The journal is resumed after this (the channel first calls the Bot API): update 61 is
        // still answered, though its reply has left and is forgotten by now.
        assert.deepEqual([...ledger.answeredInbound()], [61]);
      } finally {
        await ledger.close();
      }
    } finally {
      await dir.cleanup();
    }
  });
});

describe("the delivery ledger's confirmation after its caller's own record", () => {
  it("keeps a sent reply recorded until what confirmAfter answers settles, and holds its chat's next reply until then", async () => {
    const dir = await tempDir("bub-ledger-confirm-after-");
    try {
      const store = openSqliteDeliveryStore(join(dir.path, "delivery.sqlite3"));
      const sender = recordingSender();
      const ledger = new DeliveryLedger({ store, source: "telegram-1", sender, policy, exclusive: true });
      await ledger.start();
      try {
        const journalSynced = Promise.withResolvers<void>();
        let asked = 0;
        await ledger.enqueue({ chatId: "7", sessionId: "telegram:7", text: "first", inbound: [71] }, { confirmAfter: () => (asked++, journalSynced.promise) });
        await ledger.enqueue({ chatId: "7", sessionId: "telegram:7", text: "second", inbound: [72] });
        await ledger.enqueue({ chatId: "8", sessionId: "telegram:8", text: "other chat", inbound: [81] });
        for (let wait = 0; wait < 200 && !sender.sent.includes("other chat"); wait++) await new Promise((resolve) => setTimeout(resolve, 10));
        await new Promise((resolve) => setTimeout(resolve, 50));
        assert.equal(asked, 1, "asked once the reply was sent");
        assert.deepEqual(sender.sent.sort(), ["first", "other chat"], "chat 7's next reply waits; another chat does not");
        assert.deepEqual((await store.list(["pending"])).map((record) => record.text), ["first", "second"], "the sent reply is still recorded (a restart sends it again)");
        journalSynced.resolve();
        await ledger.drain(10_000);
        assert.deepEqual(sender.sent.sort(), ["first", "other chat", "second"]);
        assert.deepEqual(await store.list(["pending"]), [], "confirmed and forgotten once it settled");
      } finally {
        await ledger.close();
      }
    } finally {
      await dir.cleanup();
    }
  });
});
