import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { entries } from "../../src/tape/entry.ts";
import { createMemoryTapeStore } from "../../src/tape/memory-store.ts";
import { createUiApp, type UiAppOptions } from "../../src/ui/app.ts";
import { contextLine, contextShareOf, shortTokens } from "../../src/ui/context-share.ts";
import { startUiServer } from "../../src/ui/server.ts";
import type { SessionName } from "../../src/ui/sessions.ts";
import { writeTurn } from "./support.ts";

const TOKEN = "test-token-0123456789";
const PORT = 8799;
const ORIGINAL = "1111000000000000__aaaa000000000000";
const REPLAY = "1111000000000000__bbbb000000000000";
const OTHER_REPLAY = "1111000000000000__cccc000000000000";
const STRANGER = "2222000000000000__dddd000000000000";

/** `cost.models` giving the test model a 128,000-token window, and a hand-off share. */
function settings(budgetShare?: number): (path: string) => unknown {
  const values: Record<string, unknown> = { "cost.models": { "fake:test-model": { context_window: 128_000 } }, "context.budget_share": budgetShare };
  return (path) => values[path];
}

function view(store: ReturnType<typeof createMemoryTapeStore>, extra: Partial<UiAppOptions> = {}) {
  const ui = createUiApp({ store, token: TOKEN, port: () => PORT, ...extra });
  const get = async (path: string) => {
    const response = await ui.app.request(path, { headers: { host: `127.0.0.1:${PORT}`, cookie: `bub_ui_${PORT}=${TOKEN}` } });
    return { status: response.status, text: await response.text() };
  };
  return { ui, get };
}

describe("the session page's context line", () => {
  it("shows the share of the model's window the context fills and the hand-off share", async () => {
    const store = createMemoryTapeStore();
    await writeTurn(store, ORIGINAL, { user: "summarise the log", answer: "done", usage: { prompt_tokens: 52_000, completion_tokens: 480 } });
    const { ui, get } = view(store, { config: settings() });
    const page = await get(`/s/${ORIGINAL}`);
    ui.close();
    const line = /<p class="totals" id="session-context">(.*?)<\/p>/.exec(page.text)?.[1] ?? "";
    // 52,480 tokens measured by the last call; the answer after it adds nothing the estimate counts.
    assert.match(line, /^context: <strong>41%<\/strong> of 128k tokens <span class="muted">\(52,480 tokens of fake:test-model; hand-off at 80%\)<\/span>$/);
  });

  it("marks a context past the hand-off share, and takes the share from the settings", async () => {
    const store = createMemoryTapeStore();
    await writeTurn(store, ORIGINAL, { user: "go on", answer: "ok", usage: { prompt_tokens: 70_000, completion_tokens: 100 } });
    const usage = await contextShareOf(await store.fetchAll({ tape: ORIGINAL }), settings(0.5));
    assert.equal(usage?.budgetShare, 0.5);
    assert.match(contextLine(usage).value, /<strong>55%<\/strong> of 128k tokens .*hand-off at 50%.*at the hand-off share/);
  });

  it("says what it does not know: no model call yet, or a window nobody gave", async () => {
    assert.match(contextLine(null).value, /^context: — .*no model call on this tape yet/);
    const store = createMemoryTapeStore();
    await writeTurn(store, ORIGINAL, { user: "hi", answer: "hello", model: "fake:<unknown>" });
    const line = contextLine(await contextShareOf(await store.fetchAll({ tape: ORIGINAL }))).value;
    assert.match(line, /^context: 110 tokens .*the window of fake:&lt;unknown&gt; is unknown: set its context_window under cost\.models in config\.yml/);
    assert.doesNotMatch(line, /<strong>/);
  });

  it("writes windows short", () => {
    assert.deepEqual([128_000, 1_000_000, 200_000, 32_768, 5000, 12_345].map(shortTokens), ["128k", "1M", "200k", "32Ki", "5k", "12,345"]);
  });

  it("is sent again with each live update", async () => {
    const store = createMemoryTapeStore();
    await writeTurn(store, ORIGINAL, { user: "first", answer: "one", usage: { prompt_tokens: 12_800, completion_tokens: 0 } });
    const server = await startUiServer({ store, port: 0, pollMs: 20, config: settings() });
    try {
      const cookie = { cookie: `bub_ui_${server.port}=${server.token}` };
      const last = (await store.fetchAll({ tape: ORIGINAL })).at(-1)?.id ?? 0;
      const events = await fetch(`http://127.0.0.1:${server.port}/s/${ORIGINAL}/events?from=2&last=${last}`, { headers: cookie });
      const reader = events.body?.pipeThrough(new TextDecoderStream()).getReader();
      assert.ok(reader);
      let text = "";
      while (!text.includes("event: ready")) text += (await reader.read()).value ?? "";
      await writeTurn(store, ORIGINAL, { user: "second", answer: "two", usage: { prompt_tokens: 64_000, completion_tokens: 0 } });
      while (!/event: update\ndata: .*\n/.test(text)) text += (await reader.read()).value ?? "";
      const update: { context?: string } = JSON.parse(/event: update\ndata: (.*)\n/.exec(text)?.[1] ?? "{}");
      assert.match(update.context ?? "", /^context: <strong>50%<\/strong> of 128k tokens/, "the newest call's share, not the page's first one");
      await reader.cancel();
    } finally {
      await server.close();
    }
  });
});

describe("replays next to their original", () => {
  async function tapes() {
    const store = createMemoryTapeStore();
    await writeTurn(store, ORIGINAL, { user: "what is 2+2?", answer: "4" });
    await store.append(REPLAY, entries.event("replay.start", { of_session: "cli:local", of_tape: ORIGINAL, model: "openai:gpt-4o-mini", plugins: null, live: false }));
    await writeTurn(store, REPLAY, { user: "what is 2+2?", answer: "four" });
    await store.append(OTHER_REPLAY, entries.event("replay.start", { of_session: "cli:local", of_tape: ORIGINAL, model: null, plugins: [], live: false }));
    await writeTurn(store, OTHER_REPLAY, { user: "what is 2+2?", answer: "2+2=4" });
    await writeTurn(store, STRANGER, { user: "elsewhere", answer: "yes" });
    const index = new Map<string, SessionName>([
      [ORIGINAL, { sessionId: "cli:local", workspace: "/w" }],
      [REPLAY, { sessionId: "cli:local/replay-20261201T174002Z", workspace: "/w" }],
      [OTHER_REPLAY, { sessionId: "cli:local/replay-20261202T080000Z", workspace: "/w" }],
      // Same session id, another workspace: not a replay of this original.
      [STRANGER, { sessionId: "cli:local/replay-20261203T090000Z", workspace: "/elsewhere" }],
    ]);
    return { store, names: async () => index };
  }

  it("lists the replays on the original's page, oldest first, with the model each ran", async () => {
    const { store, names } = await tapes();
    const { ui, get } = view(store, { names });
    const page = (await get(`/s/${ORIGINAL}`)).text;
    ui.close();
    const line = /<p class="related" id="replays">(.*?)<\/p>/.exec(page)?.[1] ?? "";
    assert.equal(
      line,
      `replays: <a href="/s/${REPLAY}" title="cli:local/replay-20261201T174002Z">2026-12-01 17:40:02 UTC</a> <span class="muted">(openai:gpt-4o-mini)</span>, <a href="/s/${OTHER_REPLAY}" title="cli:local/replay-20261202T080000Z">2026-12-02 08:00:00 UTC</a>`,
    );
    assert.doesNotMatch(page, /id="replay-of"/);
  });

  it("links a replay back to its original, from the replay.start event or by name", async () => {
    const { store, names } = await tapes();
    const { ui, get } = view(store, { names });
    const replay = (await get(`/s/${REPLAY}`)).text;
    assert.match(replay, new RegExp(`<p class="related" id="replay-of">replay of <a href="/s/${ORIGINAL}">cli:local</a></p>`));
    assert.doesNotMatch(replay, /id="replays"/, "a replay has no replays of its own");
    // A replay tape without its replay.start event is matched to the original by name and workspace.
    await writeTurn(store, "1111000000000000__eeee000000000000", { user: "q", answer: "a" });
    const index = new Map(await names());
    index.set("1111000000000000__eeee000000000000", { sessionId: "cli:local/replay-20261204T000000Z", workspace: "/w" });
    const byName = view(store, { names: async () => index });
    assert.match((await byName.get("/s/1111000000000000__eeee000000000000")).text, new RegExp(`id="replay-of">replay of <a href="/s/${ORIGINAL}">cli:local</a>`));
    ui.close();
    byName.ui.close();
  });

  it("shows neither line for a session with no replay", async () => {
    const store = createMemoryTapeStore();
    await writeTurn(store, ORIGINAL, { user: "q", answer: "a" });
    const { ui, get } = view(store, { names: async () => new Map([[ORIGINAL, { sessionId: "cli:local" }]]) });
    const page = (await get(`/s/${ORIGINAL}`)).text;
    ui.close();
    assert.doesNotMatch(page, /class="related"/);
  });
});

describe("the header's pages", () => {
  it("links the overview and the deliveries from every page; without a ledger the page says so", async () => {
    const store = createMemoryTapeStore();
    await writeTurn(store, ORIGINAL, { user: "q", answer: "a" });
    const { ui, get } = view(store);
    for (const path of ["/", "/overview", `/s/${ORIGINAL}`, "/search?q=a", "/deliveries"]) {
      const page = (await get(path)).text;
      assert.match(page, /<nav class="site-nav" aria-label="Pages of the view"><a href="\/overview">Overview<\/a> <a href="\/deliveries">Deliveries<\/a><\/nav>/, path);
    }
    const deliveries = await get("/deliveries");
    ui.close();
    assert.equal(deliveries.status, 200);
    assert.match(deliveries.text, /This view reads no delivery ledger/);
  });
});
