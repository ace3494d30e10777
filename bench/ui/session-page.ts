// The web view's session page for a tape of 10,000 entries, in headless Chromium
// (@sparticuz/chromium driven by playwright-core): the time from navigation start until the
// page has loaded and rendered (loadEventEnd of the Navigation Timing entry, after the next
// animation frame), the server's time to answer, and the HTML's size. "paged" is what bub ui
// serves (the newest 250 entries, older ones by link), from the file and the SQLite store;
// "whole tape" renders all 10,000 at once, the cost paging avoids. "overview" is the overview
// page over the same tape (every entry read, tokens per day and the slowest turns charted).
// The session page includes the context line (the share of the model's window in use).
// Run: node bench/ui/session-page.ts [entries] [rounds]
import chromium from "@sparticuz/chromium";
import { chromium as playwright, type Browser } from "playwright-core";
import type { TapeStore } from "../../src/kernel/tape-contract.ts";
import { entries } from "../../src/tape/entry.ts";
import { createFileTapeStore } from "../../src/tape/file-store.ts";
import { createSqliteTapeStore } from "../../src/tape/sqlite-store.ts";
import { startUiServer } from "../../src/ui/server.ts";
import { turnEntries } from "../../test/ui/support.ts";
import { median, printTable, scratchDirectory } from "../tape/shape.ts";

const ENTRIES = Number(process.argv[2] ?? 10_000);
const ROUNDS = Number(process.argv[3] ?? 15);
const TAPE = "0123456789abcdef__fedcba9876543210";

/** A session/start anchor, then turns (every other one with a tool call) up to ENTRIES entries. */
async function fill(store: TapeStore): Promise<void> {
  await store.append(TAPE, entries.anchor("session/start", { owner: "human" }));
  for (let turn = 0, written = 1; written < ENTRIES; turn++) {
    const batch = turnEntries({
      user: `question ${turn}: what changed in the build since yesterday?`,
      answer: `Answer ${turn}: ${"the build got faster and the tests are green. ".repeat(4)}`,
      tool: turn % 2 === 0 ? { name: "bash", arguments: JSON.stringify({ command: `git log -n ${turn % 7}` }), result: "commit abc\nAuthor: someone\n\n    perf: faster\n".repeat(3) } : undefined,
    }).slice(0, ENTRIES - written);
    await store.appendBatch!(TAPE, batch);
    written += batch.length;
  }
}

async function measure(browser: Browser, store: TapeStore, pageSize: number, path = `/s/${TAPE}`): Promise<string[]> {
  // The context line measures against a window config.yml would give (cost.models), as a configured bub ui does.
  const server = await startUiServer({ store, port: 0, pageSize, config: (key) => (key === "cost.models" ? { "fake:test-model": { context_window: 128_000 } } : undefined) });
  // A locale of its own: this Chromium otherwise reports `en-US@posix`, which Intl (and uPlot on the overview) refuses.
  const context = await browser.newContext({ locale: "en-US" });
  const page = await context.newPage();
  await page.goto(server.url);
  const url = `http://127.0.0.1:${server.port}${path}`;
  const cookie = { cookie: `bub_ui_${server.port}=${server.token}` };
  const rendered: number[] = [];
  const answered: number[] = [];
  let bytes = 0;
  for (let round = 0; round < ROUNDS + 2; round++) {
    const started = performance.now();
    bytes = (await (await fetch(url, { headers: cookie })).text()).length;
    const serverMs = performance.now() - started;
    await page.goto(url, { waitUntil: "load" });
    // Evaluated in the page (a string, as this file is type-checked without the DOM types).
    const loaded = await page.evaluate<number>(
      `new Promise((resolve) => requestAnimationFrame(() => {
        const navigation = performance.getEntriesByType("navigation")[0];
        resolve(Math.max(navigation.loadEventEnd, performance.now()) - navigation.startTime);
      }))`,
    );
    if (round < 2) continue; // warm-up
    rendered.push(loaded);
    answered.push(serverMs);
  }
  await page.close();
  await server.close();
  // The context stays open: this Chromium runs as one process, which ends with its last context.
  return [`${(bytes / 1024).toFixed(0)} KiB`, `${median(answered).toFixed(0)} ms`, `${median(rendered).toFixed(0)} ms`, `${Math.max(...rendered).toFixed(0)} ms`];
}

const scratch = scratchDirectory("ui");
const file = createFileTapeStore({ directory: scratch.path });
const sqlite = createSqliteTapeStore({ path: `${scratch.path}/tapes.sqlite3` });
await Promise.all([fill(file), fill(sqlite)]);
const browser = await playwright.launch({ executablePath: await chromium.executablePath(), args: chromium.args, headless: true });
const rows: string[][] = [];
try {
  rows.push(["paged (bub ui), file store", ...(await measure(browser, file, 250))]);
  rows.push(["paged (bub ui), SQLite store", ...(await measure(browser, sqlite, 250))]);
  rows.push(["whole tape on one page, file store", ...(await measure(browser, file, ENTRIES))]);
  rows.push(["overview (charts drawn), file store", ...(await measure(browser, file, 250, "/overview"))]);
} finally {
  await browser.close();
  await Promise.all([file.close(), sqlite.close()]);
  scratch.remove();
}
console.log(`Session page of a ${ENTRIES.toLocaleString("en")}-entry tape, ${ROUNDS} rounds after 2 warm-up`);
printTable(["page", "HTML", "server answer (median)", "rendered in browser (median)", "worst"], rows);
