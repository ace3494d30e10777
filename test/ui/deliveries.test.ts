import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { join } from "node:path";
import { openSqliteDeliveryStore } from "../../src/channels/delivery/sqlite-store.ts";
import type { DeliveryStore } from "../../src/channels/delivery/types.ts";
import { createFileTapeStore } from "../../src/tape/file-store.ts";
import { createUiApp, type UiApp } from "../../src/ui/app.ts";
import { tempDir } from "../support/temp.ts";

const TOKEN = "test-token-0123456789";
const PORT = 8799;

describe("the delivery ledger in bub ui (/deliveries)", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let ledger: DeliveryStore;
  let ui: UiApp;
  const get = (path: string) => ui.app.request(path, { headers: { host: `127.0.0.1:${PORT}`, cookie: `bub_ui_${PORT}=${TOKEN}` } });

  before(async () => {
    dir = await tempDir("bub-ui-deliveries-");
    ledger = openSqliteDeliveryStore(join(dir.path, "delivery.sqlite3"));
    const [blocked, repeated] = await ledger.record("gateway", [
      { source: "telegram-1", chatId: "7", sessionId: "telegram:7", text: "Your key is sk-secret-value <b>bold</b>", inbound: [1] },
      { source: "telegram-1", chatId: "8", sessionId: "telegram:8", text: "Maybe twice", inbound: [2] },
      { source: "telegram-1", chatId: "9", sessionId: "telegram:9", text: "Still waiting", inbound: [3] },
    ]);
    assert.ok(blocked && repeated);
    await ledger.deadLetter(blocked.id, 1, false, "sendMessage answered 403 Forbidden: bot was blocked by the user");
    await ledger.failed(repeated.id, 1, true, "reset");
    await ledger.confirm(repeated.id, true);
    const store = createFileTapeStore({ directory: join(dir.path, "tapes") });
    ui = createUiApp({ store, token: TOKEN, port: () => PORT, redact: (text) => text.replaceAll("sk-secret-value", "[redacted]"), deliveries: () => ledger.list(["dead", "sent", "pending"]) });
  });
  after(async () => {
    ui.close();
    await ledger.close();
    await dir.cleanup();
  });

  it("lists dead letters and possibly repeated sends, redacted and escaped, with the count waiting", async () => {
    const response = await get("/deliveries");
    assert.equal(response.status, 200);
    const page = await response.text();
    assert.match(page, /1 reply waits to be sent; 1 dead letter\./);
    assert.match(page, /<h2>Dead letters<\/h2>/);
    assert.match(page, /403 Forbidden: bot was blocked by the user/);
    assert.match(page, /Your key is \[redacted\] &lt;b&gt;bold&lt;\/b&gt;/);
    assert.doesNotMatch(page, /sk-secret-value|<b>bold/);
    assert.match(page, /<h2>Possibly sent twice<\/h2>[\s\S]*Maybe twice/);
  });

  it("needs the token like every other page", async () => {
    const response = await ui.app.request("/deliveries", { headers: { host: `127.0.0.1:${PORT}` } });
    assert.notEqual(response.status, 200);
  });
});
