/**
 * The web view of the installed package with priced model calls, a replay and a delivery
 * ledger, in headless Chromium (from @sparticuz/chromium, driven by playwright-core). Two
 * `bub run` turns against one fake OpenAI-compatible server report usage that config.yml
 * prices (`cost.models`, which also gives the model's context window); `bub replay` runs
 * them again against a second fake server. The session page shows each turn's cost, the
 * total and the share of the context window in use; the overview draws the cost per day; the
 * original and its replay link to each other; `/deliveries` is in the header and fits a
 * 375 px wide screen. `BUB_UPDATE_SCREENSHOTS=1 node test/e2e/run.ts
 * test/e2e/ui-cost-replay.e2e.ts` writes the screenshots docs/observability.md shows.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import chromium from "@sparticuz/chromium";
import { chromium as playwright, type Browser, type BrowserContext, type Page } from "playwright-core";
import { sqliteLedgerPath } from "../../src/channels/delivery/settings.ts";
import { openSqliteDeliveryStore } from "../../src/channels/delivery/sqlite-store.ts";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { cleanEnv, installedPackage, runBub, tempHome } from "./support/installed.ts";

const docsImages = fileURLToPath(new URL("../../docs/images/", import.meta.url));

/**
 * Prices in US dollars per million tokens and context windows: a first-model call of 2,000
 * input and 100 output tokens costs $2.20, one of 3,000 and 200 costs $3.40.
 */
const CONFIG = `cost:
  models:
    "first:small-model":
      input_per_mtok: 1000
      output_per_mtok: 2000
      context_window: 8000
    "second:other-model":
      input_per_mtok: 100
      output_per_mtok: 200
      context_window: 16000
`;

/** Starts the installed `bub ui --port 0` and resolves with the URL it prints. */
async function startUi(bin: string, home: string, env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(bin, ["ui", "--port", "0"], { cwd: home, env: cleanEnv(home, env), stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = "";
    const timer = setTimeout(() => reject(new Error(`bub ui printed no URL in 15 s: ${stdout}${stderr}`)), 15_000);
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      const found = /bub ui: (http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)/.exec(stdout);
      if (found?.[1]) {
        clearTimeout(timer);
        resolve(found[1]);
      }
    });
    child.once("exit", (code) => reject(new Error(`bub ui exited (${code}): ${stderr}`)));
  });
  return { child, url };
}

const PHONE_WIDTH = 375;

/**
 * How wide the page lays out. A mobile viewport widens itself to content that does not fit
 * (window.innerWidth grows with it), so this is compared with the screen's width, not with
 * innerWidth.
 */
function pageWidth(page: Page): Promise<number> {
  return page.evaluate<number>(`Math.max(document.documentElement.scrollWidth, window.innerWidth)`);
}

/** The count of painted pixels of each chart canvas on the page. */
function inkedCanvases(page: Page): Promise<Record<string, number>> {
  return page.evaluate<Record<string, number>>(`Object.fromEntries([...document.querySelectorAll(".chart")].map((box) => {
    const canvas = box.querySelector("canvas");
    if (!canvas) return [box.id, 0];
    const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    let inked = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i] > 0) inked++;
    return [box.id, inked];
  }))`);
}

describe("bub ui with prices, a replay and the delivery ledger (installed package, headless Chromium)", () => {
  let first: FakeOpenAI;
  let second: FakeOpenAI;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let env: Record<string, string>;
  let ui: { child: ChildProcess; url: string };
  let browser: Browser;
  let images: string;
  // One context per viewport for the whole file: this Chromium runs as one process, which ends with its last context.
  let desktop: BrowserContext;
  let phone: BrowserContext;
  let base: string;

  before(async () => {
    const { bin } = await installedPackage();
    [first, second, home] = await Promise.all([startFakeOpenAI(), startFakeOpenAI(), tempHome()]);
    const bubHome = join(home.path, ".bub");
    await mkdir(bubHome, { recursive: true });
    await writeFile(join(bubHome, "config.yml"), CONFIG);
    env = { BUB_HOME: bubHome, BUB_MODEL: "first:small-model", BUB_FIRST_API_BASE: first.url, BUB_SECOND_API_BASE: second.url };
    first.script(
      reply.text("Three things: the freeze, the tag, the note to Ada.", { usage: { prompt_tokens: 2000, completion_tokens: 100 } }),
      reply.text("The freeze comes first.", { usage: { prompt_tokens: 3000, completion_tokens: 200 } }),
    );
    for (const words of ["what is left before the release?", "which comes first?"]) {
      const run = await runBub(["run", words], { home: home.path, env });
      assert.equal(run.code, 0, run.stderr);
    }
    second.script(
      reply.text("Freeze, tag, tell Ada.", { usage: { prompt_tokens: 1000, completion_tokens: 50 } }),
      reply.text("Freeze first.", { usage: { prompt_tokens: 1500, completion_tokens: 40 } }),
    );
    const replay = await runBub(["replay", "cli:local", "--model", "second:other-model"], { home: home.path, env, timeoutMs: 60_000 });
    assert.equal(replay.code, 0, replay.stderr);
    // A dead letter in the ledger the gateway keeps in bub's home, written as the gateway writes it.
    const ledger = openSqliteDeliveryStore(sqliteLedgerPath(bubHome));
    const [record] = await ledger.record("gateway", [
      { source: "telegram-1", chatId: "-1001234567890123", sessionId: "telegram:-1001234567890123", text: `The release notes: https://example.org/releases/2026/notes-for-the-release-of-version-two-point-oh.html ${"and more words ".repeat(12)}`, inbound: [1] },
    ]);
    assert.ok(record);
    await ledger.deadLetter(record.id, 1, false, "sendMessage answered 403 Forbidden: bot was blocked by the user");
    await ledger.close();

    ui = await startUi(bin, home.path, env);
    base = ui.url.replace(/\/\?token=.*$/, "");
    browser = await playwright.launch({ executablePath: await chromium.executablePath(), args: chromium.args, headless: true });
    // A locale of its own: this Chromium otherwise reports the container's `en-US@posix`, which Intl (and so uPlot) refuses.
    desktop = await browser.newContext({ viewport: { width: 1100, height: 900 }, locale: "en-US" });
    phone = await browser.newContext({ viewport: { width: PHONE_WIDTH, height: 800 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, locale: "en-US" });
    for (const context of [desktop, phone]) await (await context.newPage()).goto(ui.url); // trades the token for the cookie
    images = process.env.BUB_UPDATE_SCREENSHOTS === "1" ? docsImages : join(home.path, "screenshots");
    await mkdir(images, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    if (ui && ui.child.exitCode === null) {
      const exited = new Promise((resolve) => ui.child.once("exit", resolve));
      ui.child.kill("SIGTERM");
      await exited;
    }
    await Promise.all([first?.close(), second?.close()]);
    await home?.cleanup();
  });

  /** The page of the session whose row in the sessions list reads `session` (exactly). */
  async function openSession(page: Page, session: RegExp): Promise<void> {
    await page.goto(`${base}/`);
    await page.locator("#sessions tbody tr td.session", { hasText: session }).getByRole("link").click();
    await page.locator("section.turn").first().waitFor();
  }

  it("shows each turn's cost, the session's total and the share of the context window in use", async () => {
    const page = await desktop.newPage();
    await openSession(page, /^cli:local /);
    assert.deepEqual(await page.locator("section.turn .facts .cost").allTextContents(), ["cost $2.20", "cost $3.40"]);
    assert.match((await page.locator("#session-totals").textContent()) ?? "", /^2 turns · 5,300 tokens · cost \$5\.60$/, "every call priced, so no 'n of m priced' note");
    // The newest call counted 3,200 tokens of the 8,000 config.yml gives the model.
    assert.equal((await page.locator("#session-context").textContent()) ?? "", "context: 40% of 8k tokens (3,200 tokens of first:small-model; hand-off at 80%)");
    await page.screenshot({ path: join(images, "ui-cost-session.png"), fullPage: true });
  });

  it("draws the cost per day on the overview", async () => {
    const page = await desktop.newPage();
    const failed: string[] = [];
    page.on("pageerror", (error) => failed.push(error.message));
    await page.goto(`${base}/overview`);
    await page.locator("#chart-cost[data-drawn] canvas").waitFor();
    assert.equal(await page.locator("#no-cost").count(), 0, "no 'no known price' message");
    assert.equal(await page.locator("#chart-cost").getAttribute("data-drawn"), "1", "one day with priced calls");
    const inked = await inkedCanvases(page);
    assert.ok((inked["chart-cost"] ?? 0) > 500, `the cost chart has a bar: ${JSON.stringify(inked)}`);
    // Two first-model calls ($5.60) and two replay calls (1,050 and 1,540 tokens at $100/$200 a million: $0.1050 + $0.1580).
    assert.match((await page.locator("p.totals").textContent()) ?? "", /· cost \$5\.87$/);
    assert.deepEqual(failed, []);
  });

  it("links a replay and its original both ways", async () => {
    const page = await desktop.newPage();
    await openSession(page, /^cli:local /);
    const replays = page.locator("#replays");
    assert.match((await replays.textContent()) ?? "", /^replays: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(second:other-model\)$/);
    await replays.getByRole("link").click();
    await page.getByRole("heading", { level: 1, name: /^cli:local\/replay-\d{8}T\d{9}Z/ }).waitFor();
    assert.deepEqual((await page.locator("article.role-assistant .content").allTextContents()).map((text) => text.trim()), ["Freeze, tag, tell Ada.", "Freeze first."]);
    assert.match((await page.locator("#session-context").textContent()) ?? "", /^context: 10% of 16k tokens \(1,540 tokens of second:other-model;/, "measured against the replay model's window");
    assert.equal(await page.locator("#replays").count(), 0);
    await page.screenshot({ path: join(images, "ui-replay.png") });
    await page.locator("#replay-of").getByRole("link", { name: "cli:local" }).click();
    await page.locator("#replays").waitFor();
    assert.match((await page.locator("h1").textContent()) ?? "", /^cli:local /);
  });

  it("has the deliveries page in the header, fitting a 375 px wide screen", async () => {
    const page = await phone.newPage();
    await page.goto(`${base}/`);
    await page.locator("header.site").getByRole("link", { name: "Deliveries" }).click();
    await page.getByRole("heading", { level: 1, name: "Deliveries" }).waitFor();
    const row = page.locator("main table tbody tr").first();
    assert.match((await row.textContent()) ?? "", /403 Forbidden: bot was blocked by the user/);
    for (const path of ["/deliveries", "/overview", "/"]) {
      await page.goto(`${base}${path}`);
      const width = await pageWidth(page);
      assert.ok(width <= PHONE_WIDTH, `${path}: ${width} px wide on a ${PHONE_WIDTH} px screen`);
    }
    await openSession(page, /^cli:local /);
    const width = await pageWidth(page);
    assert.ok(width <= PHONE_WIDTH, `the session page with its context and replays lines: ${width} px wide on a ${PHONE_WIDTH} px screen`);
    await page.goto(`${base}/deliveries`);
    await page.screenshot({ path: join(images, "ui-deliveries-phone.png") });
  });
});
