/**
 * The readable web view of the installed package, in headless Chromium (from
 * @sparticuz/chromium, driven by playwright-core): two `bub run` turns against the fake model
 * write a session whose answers are Markdown and whose prompt, tool output and answer carry
 * a `<script>` and an `onerror=`. The session page renders the Markdown, runs none of the
 * scripts (a window flag stays unset), numbers the turns 1 and 2, folds the prompt's context
 * header, and draws each turn's model and tool calls as bars; the overview draws its charts
 * with uPlot served by bub; search names the session and marks the match; every page fits a
 * 375 px wide screen. `BUB_UPDATE_SCREENSHOTS=1 node test/e2e/run.ts test/e2e/ui-views.e2e.ts`
 * writes the screenshots docs/observability.md shows into docs/images/.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import chromium from "@sparticuz/chromium";
import { chromium as playwright, type Browser, type BrowserContext, type Page } from "playwright-core";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { cleanEnv, installedPackage, runBub, tempHome } from "./support/installed.ts";

const docsImages = fileURLToPath(new URL("../../docs/images/", import.meta.url));

const ANSWER = [
  "## Release plan",
  "",
  "1. Freeze the **main** branch",
  "2. Tag `v2.0`",
  "3. Tell Ada",
  "",
  "```sh",
  "git tag v2.0 && git push --tags",
  "```",
  "",
  "<script>window.__pwned = 'answer script'</script>",
  "<img src=x onerror=\"window.__pwned = 'answer onerror'\">",
].join("\n");

/** Starts the installed `bub ui --port 0` and resolves with the URL it prints. */
async function startUi(bin: string, home: string, env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(bin, ["ui", "--port", "0"], { cwd: home, env: cleanEnv(home, env), stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = "";
    const timer = setTimeout(() => reject(new Error(`bub ui printed no URL in 15 s: ${stdout}${stderr}`)), 15_000);
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      const found = /bub ui: (http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)/.exec(stdout);
      if (found) {
        clearTimeout(timer);
        resolve(found[1]!);
      }
    });
    child.once("exit", (code) => reject(new Error(`bub ui exited (${code}): ${stderr}`)));
  });
  return { child, url };
}

/** The phone's screen width. */
const PHONE_WIDTH = 375;

/**
 * How wide the page lays out, against the phone's screen width: a mobile viewport widens
 * itself to content that does not fit (window.innerWidth grows with it), so `inner` is the
 * screen's width, not innerWidth.
 */
async function fitsWidth(page: Page): Promise<{ scroll: number; inner: number }> {
  const scroll = await page.evaluate<number>(`Math.max(document.documentElement.scrollWidth, window.innerWidth)`);
  return { scroll, inner: PHONE_WIDTH };
}

describe("bub ui, readable (installed package, headless Chromium)", () => {
  let openai: FakeOpenAI;
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
    [openai, home] = await Promise.all([startFakeOpenAI(), tempHome()]);
    env = { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "local:test-model", BUB_LOCAL_API_BASE: openai.url };
    await writeFile(join(home.path, "notes.txt"), "- freeze main\n- tag v2.0\n<script>window.__pwned = 'tool script'</script>\n");
    openai.script(
      reply.toolCalls([{ id: "call_notes", name: "fs_read", arguments: '{"path":"notes.txt"}' }], { usage: { prompt_tokens: 1082, completion_tokens: 9 }, delayMs: 150 }),
      reply.text(ANSWER, { usage: { prompt_tokens: 1184, completion_tokens: 60 }, delayMs: 250 }),
    );
    const first = await runBub(["run", "plan the release <img src=x onerror=\"window.__pwned = 'prompt onerror'\">"], { home: home.path, env });
    assert.equal(first.code, 0, first.stderr);
    openai.script(reply.text("Tag it *after* the freeze.", { usage: { prompt_tokens: 1300, completion_tokens: 8 }, delayMs: 100 }));
    const second = await runBub(["run", "which comes first?"], { home: home.path, env });
    assert.equal(second.code, 0, second.stderr);
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
    await openai.close();
    await home.cleanup();
  });

  /** The session page, reached from the sessions list. */
  async function openSession(page: Page): Promise<void> {
    await page.goto(`${base}/`);
    await page.locator("#sessions tbody tr").first().getByRole("link").click();
    await page.locator("section.turn").first().waitFor();
  }

  it("renders the answer's Markdown, runs no script from the tape, numbers the turns and folds the context header", async () => {
    const page = await desktop.newPage();
    const dialogs: string[] = [];
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await openSession(page);
    const answer = page.locator("article.role-assistant .markdown").first();
    assert.equal(await answer.locator("h2").textContent(), "Release plan");
    assert.deepEqual(await answer.locator("ol > li").allTextContents(), ["Freeze the main branch", "Tag v2.0", "Tell Ada"]);
    assert.equal(await answer.locator("strong").textContent(), "main");
    assert.equal(await answer.locator("pre > code").textContent(), "git tag v2.0 && git push --tags\n");
    assert.match((await answer.textContent()) ?? "", /<script>window.__pwned = 'answer script'<\/script>/, "the answer's HTML is shown as text");
    await page.locator("details.tool").first().locator("summary").click();
    await page.locator("details.tool").first().getByText("window.__pwned = 'tool script'").waitFor();
    assert.equal(await page.evaluate<unknown>("window.__pwned"), undefined, "no script, handler or image from the tape ran");
    assert.deepEqual(dialogs, []);
    assert.equal(await page.locator("article.role-assistant img, article.role-user img, .markdown script").count(), 0);

    assert.deepEqual(await page.locator("section.turn h3").allTextContents(), ["Turn 1", "Turn 2"], "numbered as bub tape show numbers them");
    const user = page.locator("article.role-user").first();
    assert.match((await user.locator(".content").textContent()) ?? "", /^plan the release <img src=x onerror/);
    const context = user.locator("details.context");
    assert.equal(await context.getAttribute("open"), null, "the context header starts folded");
    assert.equal(await context.locator("pre").isVisible(), false);
    assert.doesNotMatch((await user.locator(".content").textContent()) ?? "", /channel=|---Date/);
    await context.locator("summary").click();
    assert.match((await context.locator("pre").textContent()) ?? "", /channel=\$cli/);

    const bars = page.locator("section.turn").first().locator("figure.turn-chart li");
    assert.deepEqual(await bars.locator(".badge").allTextContents(), ["model", "tool", "model"], "the first turn's calls in order");
    assert.equal(await bars.locator("rect.bar").count(), 3);
    assert.doesNotMatch((await bars.first().textContent()) ?? "", /not recorded/, "the model call's wall time is on the tape");
    assert.match((await page.locator("#session-totals").textContent()) ?? "", /^2 turns · 3,643 tokens · cost —/, "cost — while no price is known");
    await page.screenshot({ path: join(images, "ui-markdown.png"), fullPage: true });
  });

  it("draws the overview's charts with the library bub serves", async () => {
    const page = await desktop.newPage();
    const failed: string[] = [];
    page.on("requestfailed", (request) => failed.push(request.url()));
    page.on("pageerror", (error) => failed.push(error.message));
    await page.goto(`${base}/overview`);
    for (const id of ["chart-tokens", "chart-slowest"]) await page.locator(`#${id}[data-drawn] canvas`).waitFor();
    // The plot's pixels: a drawn chart is not blank.
    const inked = await page.evaluate<number[]>(`[...document.querySelectorAll(".chart canvas")].map((canvas) => {
      const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
      let inked = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i] > 0) inked++;
      return inked;
    })`);
    assert.equal(inked.length, 2, "tokens and slowest turns; no cost chart while no price is known");
    assert.ok(inked.every((count) => count > 500), `the charts have bars: ${inked}`);
    assert.match((await page.locator("#no-cost").textContent()) ?? "", /no[^]*known price/i);
    assert.equal(await page.locator("#chart-tokens").getAttribute("data-drawn"), "1", "one day of model calls");
    assert.equal(await page.locator("#chart-slowest").getAttribute("data-drawn"), "2", "both turns");
    assert.match((await page.locator("table.rows").first().textContent()) ?? "", /cli:local · Turn 1/);
    const sources = await page.evaluate<string[]>(`[...document.scripts].map((script) => script.src)`);
    assert.ok(sources.every((src) => src.startsWith(base)), `scripts come from bub itself: ${sources}`);
    assert.deepEqual(failed, []);
    await page.screenshot({ path: join(images, "ui-overview.png"), fullPage: true });
  });

  it("names the session in search results and marks the match", async () => {
    const page = await desktop.newPage();
    await page.goto(`${base}/`);
    await page.getByLabel("Search tapes").fill("Tell Ada");
    await page.getByLabel("Search tapes").press("Enter");
    const hit = page.locator("li.hit").first();
    await hit.waitFor();
    assert.match((await hit.locator(".hit-session").textContent()) ?? "", /^cli:local/, "the session id, not the tape's hash");
    assert.deepEqual(await hit.locator("mark").allTextContents(), ["Tell Ada"]);
    assert.doesNotMatch((await hit.textContent()) ?? "", /[{}]"|"role"|"content"/, "no raw JSON");
    await page.screenshot({ path: join(images, "ui-search.png") });
  });

  it("fits a 375 px wide screen without scrolling sideways", async () => {
    const page = await phone.newPage();
    for (const path of ["/", "/overview", "/deliveries", "/search?q=release"]) {
      await page.goto(`${base}${path}`);
      const { scroll, inner } = await fitsWidth(page);
      assert.ok(scroll <= inner, `${path}: ${scroll} px wide in a ${inner} px window`);
    }
    await openSession(page);
    const { scroll, inner } = await fitsWidth(page);
    assert.ok(scroll <= inner, `the session page: ${scroll} px wide in a ${inner} px window`);
    await page.screenshot({ path: join(images, "ui-phone.png") });
  });
});
