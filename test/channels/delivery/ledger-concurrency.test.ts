// The ledger sends to several chats side by side, up to its concurrency, and one call at a
// time per chat, in the order recorded (SQLite ledger under a temporary home).
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { DeliveryLedger, type DeliverySender } from "../../../src/channels/delivery/ledger.ts";
import { openSqliteDeliveryStore } from "../../../src/channels/delivery/sqlite-store.ts";
import { until } from "./support.ts";

/** A sender whose calls stay in flight until released; it notes the most in flight at once, overall and per chat. */
function gatedSender() {
  const inFlight = new Map<string, number>();
  const sent: string[] = [];
  const waiting: (() => void)[] = [];
  let now = 0;
  let most = 0;
  let mostPerChat = 0;
  const sender: DeliverySender = {
    async send(record, partSent) {
      now++;
      most = Math.max(most, now);
      const chat = (inFlight.get(record.chatId) ?? 0) + 1;
      inFlight.set(record.chatId, chat);
      mostPerChat = Math.max(mostPerChat, chat);
      await new Promise<void>((resolve) => waiting.push(resolve));
      inFlight.set(record.chatId, chat - 1);
      now--;
      sent.push(record.text);
      await partSent(1, 1);
    },
    classify: (error) => ({ kind: "permanent", reason: String(error) }),
  };
  return { sender, sent, waiting, most: () => most, mostPerChat: () => mostPerChat };
}

describe("the delivery ledger's concurrency", () => {
  it("has up to `concurrency` calls in flight across chats, one per chat, and keeps each chat's order", async () => {
    const store = openSqliteDeliveryStore(join(mkdtempSync(join(tmpdir(), "bub-ledger-")), "delivery.sqlite3"));
    const gate = gatedSender();
    const ledger = new DeliveryLedger({ store, source: "telegram-1", sender: gate.sender, policy: { maxAttempts: 3, backoffMs: 10, maxBackoffMs: 100 }, exclusive: true, concurrency: 3 });
    await ledger.start();
    try {
      for (let reply = 1; reply <= 2; reply++) for (let chat = 1; chat <= 5; chat++) await ledger.enqueue({ chatId: String(chat), sessionId: `telegram:${chat}`, text: `chat ${chat} reply ${reply}`, inbound: [] });
      await until(() => gate.waiting.length === 3, "three calls in flight");
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(gate.waiting.length, 3, "no more than the concurrency");
      while (gate.sent.length < 10) {
        gate.waiting.shift()?.();
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await ledger.drain(5000);
      assert.equal(gate.most(), 3);
      assert.equal(gate.mostPerChat(), 1, "one call at a time per chat");
      for (let chat = 1; chat <= 5; chat++) {
        const mine = gate.sent.filter((text) => text.startsWith(`chat ${chat} `));
        assert.deepEqual(mine, [`chat ${chat} reply 1`, `chat ${chat} reply 2`]);
      }
    } finally {
      await ledger.close();
    }
  });
});
