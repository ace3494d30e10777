// The delivery ledger's own cost per reply on the SQLite store (<BUB_HOME>/delivery.sqlite3):
// each reply is recorded (group-committed with the replies recorded in the same turn of the
// event loop) and then confirmed (deleted), the way the ledger does it: records arrive in
// bursts of `burst` (turns ending together), confirmations one after another (one send in
// flight). Measured: wall time and CPU time (process.cpuUsage) per reply, fsyncs included.
//
// Run: node bench/delivery/ledger.ts [replies=2000] [burst=20]
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteDeliveryStore } from "../../src/channels/delivery/sqlite-store.ts";

const REPLIES = Number(process.argv[2] ?? 2000);
const BURST = Number(process.argv[3] ?? 20);

const dir = await mkdtemp(join(tmpdir(), "bub-bench-ledger-"));
const store = openSqliteDeliveryStore(join(dir, "delivery.sqlite3"));
const text = "A reply of a few hundred characters. ".repeat(8);
const cpuStart = process.cpuUsage();
const started = performance.now();
for (let done = 0; done < REPLIES; done += BURST) {
  const burst = Array.from({ length: Math.min(BURST, REPLIES - done) }, (_, index) =>
    store.record("bench", [{ source: "telegram-1", chatId: String(done + index), sessionId: `telegram:${done + index}`, text, inbound: [done + index] }]),
  );
  const recorded = (await Promise.all(burst)).flat();
  for (const record of recorded) await store.confirm(record.id, false);
}
const wallMs = performance.now() - started;
const cpu = process.cpuUsage(cpuStart);
await store.close();
await rm(dir, { recursive: true, force: true });
console.log(`Node ${process.version}, ${REPLIES} replies in bursts of ${BURST}, SQLite ledger in ${tmpdir()}`);
console.log(`wall ${(wallMs / REPLIES).toFixed(3)} ms/reply | CPU ${((cpu.user + cpu.system) / 1000 / REPLIES).toFixed(3)} ms/reply`);
