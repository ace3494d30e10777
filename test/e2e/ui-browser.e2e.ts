/**
 * `bub ui` of the installed package in a real browser: headless Chromium (from
 * @sparticuz/chromium) driven by playwright-core. A `bub run` against the fake model writes a
 * session with a tool call; the page lists it, shows its messages and the tool call, shows a
 * second turn as it is written, and refuses a request without the token. The screenshots
 * are the ones docs/observability.md shows: `BUB_UPDATE_SCREENSHOTS=1 node test/e2e/run.ts
 * test/e2e/ui-browser.e2e.ts` writes them to docs/images/.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import chromium from "@sparticuz/chromium";
import { chromium as playwright, type Browser, type BrowserContext } from "playwright-core";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { cleanEnv, installedPackage, runBub, tempHome } from "./support/installed.ts";

/** docs/images/ with BUB_UPDATE_SCREENSHOTS=1 (the pictures docs/observability.md shows), else a temporary folder, so a test run leaves the checkout as it was. */
const docsImages = fileURLToPath(new URL("../../docs/images/", import.meta.url));

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

describe("bub ui in a headless browser (installed package)", () => {
  let openai: FakeOpenAI;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let env: Record<string, string>;
  let ui: { child: ChildProcess; url: string };
  let browser: Browser;
  let images: string;
  // Two contexts for the whole file: Chromium here runs as one process (chromium.args has
  // --single-process), which ends when the last context closes.
  let signedIn: BrowserContext;
  let stranger: BrowserContext;

  before(async () => {
    const { bin } = await installedPackage();
    [openai, home] = await Promise.all([startFakeOpenAI(), tempHome()]);
    env = { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "local:test-model", BUB_LOCAL_API_BASE: openai.url };
    await writeFile(join(home.path, "notes.txt"), "- water the plants\n- call Ada about the release\n");
    openai.script(
      reply.toolCalls([{ id: "call_notes", name: "fs_read", arguments: '{"path":"notes.txt"}' }], { usage: { prompt_tokens: 1082, completion_tokens: 9 } }),
      reply.text("Your notes list two things: water the plants, and call Ada about the release.", { usage: { prompt_tokens: 1184, completion_tokens: 15 } }),
    );
    const run = await runBub(["run", "what is on my list?"], { home: home.path, env });
    assert.equal(run.code, 0, run.stderr);
    ui = await startUi(bin, home.path, env);
    browser = await playwright.launch({ executablePath: await chromium.executablePath(), args: chromium.args, headless: true });
    signedIn = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    stranger = await browser.newContext();
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

  it("lists the session, shows its messages and tool call, and shows a new turn as it is written", async () => {
    const page = await signedIn.newPage();
    const dialogs: string[] = [];
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    const response = await page.goto(ui.url);
    assert.equal(response?.status(), 200);
    assert.equal(new URL(page.url()).search, "", "the token left the address bar");
    await page.getByRole("heading", { name: "Sessions" }).waitFor();
    const rows = page.locator("#sessions tbody tr");
    assert.equal(await rows.count(), 1);
    const row = (await rows.first().textContent()) ?? "";
    assert.match(row, /^cli:local /, "the session id from the store's name index, not the tape's hash");
    assert.match(row, /assistant: Your notes list two things/);
    await page.screenshot({ path: join(images, "ui-sessions.png") });

    await rows.first().getByRole("link").click();
    await page.locator("article.role-user .content", { hasText: "what is on my list?" }).waitFor();
    await page.locator("article.role-assistant .content", { hasText: "Your notes list two things" }).waitFor();
    const tool = page.locator("details.tool").first();
    assert.match((await tool.locator("summary").textContent()) ?? "", /fs_read/);
    assert.equal(await tool.getAttribute("open"), null, "tool calls start folded");
    await tool.locator("summary").focus();
    await page.keyboard.press("Enter");
    await tool.getByText("call Ada about the release").waitFor();
    const facts = (await page.locator("section.turn", { has: tool }).locator(".facts").textContent()) ?? "";
    assert.match(facts, /2,290 tokens \(2,266 in, 24 out\)/);
    assert.match(facts, /turn \S+/, "the turn id, to find the turn's trace");
    await page.locator("#live[data-state=on]").waitFor();
    await page.screenshot({ path: join(images, "ui-session.png"), fullPage: true });

    openai.script(reply.text("Watering first, then the call.", { usage: { prompt_tokens: 1300, completion_tokens: 8 } }));
    const second = await runBub(["run", "which one first? <img src=x onerror=alert(1)>"], { home: home.path, env });
    assert.equal(second.code, 0, second.stderr);
    await page.locator("article.role-assistant .content", { hasText: "Watering first, then the call." }).waitFor({ timeout: 10_000 });
    await page.locator("article.role-user .content", { hasText: "which one first? <img src=x onerror=alert(1)>" }).waitFor();
    assert.equal(await page.locator("section.turn").count(), 2, "two turns");
    assert.deepEqual(await page.locator("section.turn h3").allTextContents(), ["Turn 1", "Turn 2"], "the live turn is numbered on the whole tape");
    await page.locator("#session-totals", { hasText: /^2 turns · 3,598 tokens/ }).waitFor();
    assert.deepEqual(dialogs, [], "tape text never runs as script");
    await page.locator("section.turn").last().screenshot({ path: join(images, "ui-live-turn.png") });
    for (const name of ["ui-sessions.png", "ui-session.png", "ui-live-turn.png"]) {
      const png = await readFile(join(images, name));
      assert.ok(png.length > 1000 && png.subarray(1, 4).toString() === "PNG", `${name} is a screenshot`);
    }
  });

  it("finds text across tapes", async () => {
    const page = await signedIn.newPage();
    await page.goto(ui.url);
    await page.getByLabel("Search tapes").fill("water the plants");
    await page.getByLabel("Search tapes").press("Enter");
    await page.locator("li.hit").first().waitFor();
    assert.ok((await page.locator("li.hit").count()) >= 1);
  });

  it("loads a spilled tool result when asked", async () => {
    const lines = Array.from({ length: 400 }, (_, index) => `line ${index + 1} of the build log`).join("\n");
    await writeFile(join(home.path, "build.log"), `${lines}\n`);
    openai.script(
      reply.toolCalls([{ id: "call_log", name: "fs_read", arguments: '{"path":"build.log"}' }]),
      reply.text("The log has 400 lines."),
    );
    const run = await runBub(["run", "--session-id", "cli:spill", "read build.log"], { home: home.path, env: { ...env, BUB_SPILL_THRESHOLD: "100" } });
    assert.equal(run.code, 0, run.stderr);
    const page = await signedIn.newPage();
    await page.goto(ui.url);
    await page.locator("#sessions tbody tr", { hasText: "cli:spill" }).getByRole("link").click();
    await page.getByRole("heading", { level: 1, name: /cli:spill/ }).waitFor();
    const tool = page.locator("details.tool", { hasText: "build.log" });
    await tool.locator("summary").click();
    await tool.getByText(/tool output spilled/).waitFor();
    const output = tool.locator("pre.spilled");
    assert.equal(await output.isVisible(), false);
    await tool.getByRole("button", { name: "Load the full output" }).click();
    await tool.getByRole("button", { name: "Full output loaded" }).waitFor();
    assert.match((await output.textContent()) ?? "", /line 1 of the build log\n[^]*line 400 of the build log/);
  });

  it("refuses a request without the token", async () => {
    const base = ui.url.replace(/\?token=.*$/, "");
    assert.equal((await fetch(base)).status, 401);
    const page = await stranger.newPage();
    const response = await page.goto(base);
    assert.equal(response?.status(), 401);
    assert.match(await page.textContent("body") ?? "", /access token/);
    const wrong = await page.goto(`${base}?token=not-the-token`);
    assert.equal(wrong?.status(), 403);
  });
});
