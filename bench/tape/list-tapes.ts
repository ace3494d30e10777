// Listing the tapes of a directory holding 1,000 session tapes and 1,000 sidecar tapes,
// on a fresh store object each time (the `bub` CLI lists tapes once per process).
// Run: node bench/tape/list-tapes.ts
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createFileTapeStore } from "../../src/tape/file-store.ts";
import { createSqliteTapeStore } from "../../src/tape/sqlite-store.ts";
import { entries } from "../../src/tape/entry.ts";
import { encodeEntry, prepareEntry } from "../../src/tape/entry.ts";
import { median, printTable, scratchDirectory, timed } from "./shape.ts";

const TAPES = 1_000;
const RUNS = 20;
const name = (index: number) => `${index.toString(16).padStart(16, "0")}__${(index * 7919).toString(16).padStart(16, "0")}`;

const rows: string[][] = [];
const scratch = scratchDirectory("list");
try {
  const line = `${encodeEntry(1, prepareEntry(entries.anchor("session/start", { owner: "human" })))}\n`;
  for (let index = 0; index < TAPES; index++) {
    writeFileSync(join(scratch.path, `${name(index)}.jsonl`), line);
    writeFileSync(join(scratch.path, `${name(index)}__sidecar__spill.jsonl`), line);
  }
  const fileTimes: number[] = [];
  let listed = 0;
  for (let run = 0; run < RUNS; run++) {
    const store = createFileTapeStore({ directory: scratch.path });
    fileTimes.push(await timed(async () => (listed = (await store.listTapes()).length)));
  }
  rows.push(["file", String(listed), `${median(fileTimes).toFixed(2)} ms`, `${Math.max(...fileTimes).toFixed(2)} ms`]);

  const path = join(scratch.path, "tapes.sqlite3");
  const writer = createSqliteTapeStore({ path });
  for (let index = 0; index < TAPES; index++) {
    await writer.appendBatch(name(index), [entries.anchor("session/start")]);
    await writer.appendBatch(`${name(index)}__sidecar__spill`, [entries.anchor("spill/x/manifest")]);
  }
  await writer.close();
  const sqliteTimes: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const store = createSqliteTapeStore({ path });
    sqliteTimes.push(await timed(async () => (listed = (await store.listTapes()).length)));
    await store.close();
  }
  rows.push(["sqlite", String(listed), `${median(sqliteTimes).toFixed(2)} ms`, `${Math.max(...sqliteTimes).toFixed(2)} ms`]);
} finally {
  scratch.remove();
}
printTable(["store", "tapes listed", "median", "worst"], rows);
console.log(`\n${TAPES} session tapes + ${TAPES} sidecar tapes, fresh store object per run, ${RUNS} runs; target <= 100 ms`);
