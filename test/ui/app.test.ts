import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { join } from "node:path";
import { createFileTapeStore, type FileTapeStore } from "../../src/tape/file-store.ts";
import { createSqliteTapeStore } from "../../src/tape/sqlite-store.ts";
import { entries } from "../../src/tape/entry.ts";
import { createSpillSidecar } from "../../src/tape/spill.ts";
import { createTape } from "../../src/tape/tape.ts";
import { createUiApp, type UiApp } from "../../src/ui/app.ts";
import { startUiServer } from "../../src/ui/server.ts";
import { tempDir } from "../support/temp.ts";
import { writeTurn } from "./support.ts";

const TOKEN = "test-token-0123456789";
const PORT = 8799;
const host = { host: `127.0.0.1:${PORT}` };
const TAPE = "aaaa000000000000__bbbb000000000000";
const OTHER = "aaaa000000000000__cccc000000000000";

describe("the web view (bub ui)", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let store: FileTapeStore;
  let ui: UiApp;
  const get = (path: string, headers: Record<string, string> = {}) =>
    ui.app.request(path, { headers: { ...host, cookie: `bub_ui_${PORT}=${TOKEN}`, ...headers } });

  before(async () => {
    dir = await tempDir("bub-ui-");
    store = createFileTapeStore({ directory: join(dir.path, "tapes") });
    await writeTurn(store, TAPE, {
      user: "what is in notes.txt?",
      tool: { name: "fs_read", arguments: '{"path":"notes.txt"}', result: "buy milk" },
      answer: "Your notes say: buy milk.",
      usage: { prompt_tokens: 1200, completion_tokens: 34 },
    });
    await writeTurn(store, TAPE, { user: "thanks <script>alert(1)</script>", answer: 'you are welcome "<b>"' });
    await store.append(TAPE, entries.anchor("phase/2", { summary: "done" }));
    await writeTurn(store, OTHER, { user: "a zebra question", answer: "zebras are striped", date: new Date(Date.now() + 60_000) });
    ui = createUiApp({ store, token: TOKEN, port: () => PORT, pageSize: 100, redact: (text) => text.replaceAll("sk-secret-value", "[redacted:BUB_API_KEY]") });
  });
  after(async () => {
    ui.close();
    await store.close();
    await dir.cleanup();
  });

  it("refuses a request without the token (401), with a wrong one (403) or for a foreign host (403)", async () => {
    assert.equal((await ui.app.request("/", { headers: host })).status, 401);
    assert.equal((await ui.app.request(`/s/${TAPE}`, { headers: host })).status, 401);
    assert.equal((await ui.app.request("/assets/ui.js", { headers: host })).status, 401);
    assert.equal((await ui.app.request("/?token=nope", { headers: host })).status, 403);
    assert.equal((await ui.app.request("/", { headers: { ...host, cookie: `bub_ui_${PORT}=nope` } })).status, 403);
    assert.equal((await ui.app.request(`/?token=${TOKEN}`, { headers: { host: `evil.example:${PORT}` } })).status, 403);
  });

  it("trades the token in the URL for a cookie and drops it from the address", async () => {
    const response = await ui.app.request(`/s/${TAPE}?before=5&token=${TOKEN}`, { headers: host });
    assert.equal(response.status, 303);
    assert.equal(response.headers.get("location"), `/s/${TAPE}?before=5`);
    assert.match(response.headers.get("set-cookie") ?? "", new RegExp(`^bub_ui_${PORT}=${TOKEN};.*HttpOnly.*SameSite=Strict`, "i"));
  });

  it("lists the sessions, newest activity first, with entry counts and the last message", async () => {
    const response = await get("/");
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-security-policy") ?? "", /script-src 'self'/);
    const page = await response.text();
    assert.ok(page.indexOf(OTHER) < page.indexOf(TAPE), "the most recent tape comes first");
    assert.match(page, new RegExp(`href="/s/${TAPE}"`));
    assert.match(page, /assistant: zebras are striped/);
    const total = (await store.fetchAll({ tape: TAPE })).length;
    assert.match(page, new RegExp(`<td class="num" data-label="Turns">2</td><td class="num" data-label="Entries">${total}</td><td class="num" data-label="Size">\\d+\\.\\d KiB</td>`), "turns, entries and size");
  });

  it("shows a session as a timeline: anchors as headings, turns with usage and duration, tool calls with results, text escaped", async () => {
    const page = await (await get(`/s/${TAPE}`)).text();
    assert.match(page, /<h2><span aria-hidden="true">⚓<\/span> session\/start<\/h2>/);
    assert.match(page, /<h2><span aria-hidden="true">⚓<\/span> phase\/2<\/h2>/);
    assert.equal(page.match(/<section class="turn"/g)?.length, 2);
    assert.match(page, /2,435 tokens \(2,400 in, 35 out\)/, "both model calls of the first turn are summed");
    assert.match(page, /<details class="tool"[^>]*><summary><span class="badge">tool<\/span> <code>fs_read<\/code>/);
    assert.match(page, /<h4>Result <a class="muted" href="#e\d+">#\d+<\/a><\/h4><pre>buy milk<\/pre>/);
    assert.match(page, /Your notes say: buy milk\./);
    assert.doesNotMatch(page, /<script>alert/);
    assert.match(page, /thanks &lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.match(page, /<div class="content markdown"><p>you are welcome "&lt;b&gt;"<\/p>/, "the answer as Markdown, its HTML shown as text");
    assert.match(page, /<h3><a href="#e\d+">Turn 1<\/a><\/h3>/, "turns numbered as bub tape show numbers them");
    assert.match(page, /<h3><a href="#e\d+">Turn 2<\/a><\/h3>/);
    assert.match(page, /<span>2 turns<\/span> · <span>2,545 tokens<\/span> · <span id="session-cost">cost —<\/span>/, "the session's totals; no price known");
    assert.match(page, /data-live="\/s\/[^"]+\/events\?from=\d+&amp;last=\d+"/);
  });

  it("hides known secrets in what it shows: the session page, the sessions list, search hits", async () => {
    const tape = "aaaa000000000000__dddd000000000000";
    await writeTurn(store, tape, { user: "my key is sk-secret-value", answer: "your key sk-secret-value is noted", date: new Date(Date.now() + 120_000) });
    const page = await (await get(`/s/${tape}`)).text();
    assert.doesNotMatch(page, /sk-secret-value/);
    assert.match(page, /\[redacted:BUB_API_KEY\]/);
    const sessions = await (await get("/")).text();
    assert.doesNotMatch(sessions, /sk-secret-value/);
    assert.match(sessions, /assistant: your key \[redacted:BUB_API_KEY\] is noted/, "the row's last message");
    const search = await (await get("/search?q=secret-val")).text();
    assert.doesNotMatch(search, /sk-secret/);
    assert.match(search, /No entry contains/);
    await store.reset(tape);
  });

  it("pages a long tape: the newest page first, older pages by link, each starting at a turn", async () => {
    const tape = "aaaa000000000000__eeee000000000000";
    for (let turn = 0; turn < 40; turn++) await writeTurn(store, tape, { user: `question ${turn}`, answer: `answer ${turn}` });
    const newest = await (await get(`/s/${tape}`)).text();
    assert.match(newest, /question 39/);
    assert.doesNotMatch(newest, /question 5\b/);
    const older = /href="(\/s\/[^"]+\?before=(\d+))">Older entries/.exec(newest);
    assert.ok(older, "an older-entries link");
    const page = await (await get(older[1]!.replaceAll("&amp;", "&"))).text();
    assert.match(page, /Newer entries/);
    assert.doesNotMatch(page, /data-live=/, "older pages are not live");
    assert.match(page, /<section class="turn" data-from="\d+" aria-label="Turn \d+" data-turn="\d+"/, "the page starts with a whole turn");
    const around = await (await get(`/s/${tape}?around=5`)).text();
    assert.match(around, /question 0/);
    await store.reset(tape);
  });

  it("shows session ids and workspaces from the store's name index when it keeps one", async () => {
    const indexed = Object.assign(Object.create(store) as FileTapeStore, {
      tapeNames: async () => [{ tape: OTHER, sessionId: "telegram:<42>", workspace: "/home/ada/project" }],
    });
    const named = createUiApp({ store: indexed, token: TOKEN, port: () => PORT });
    try {
      const request = (path: string) => named.app.request(path, { headers: { ...host, cookie: `bub_ui_${PORT}=${TOKEN}` } });
      const list = await (await request("/")).text();
      assert.match(list, new RegExp(`<a href="/s/${OTHER}">telegram:&lt;42&gt; <span class="muted">/home/ada/project</span></a>`));
      assert.match(list, new RegExp(`<a href="/s/${TAPE}"><code>${TAPE}</code></a>`), "a tape the index does not know shows its name");
      assert.match(await (await request(`/s/${OTHER}`)).text(), /<h1>telegram:&lt;42&gt; <span class="muted">\/home\/ada\/project<\/span><\/h1>/);
    } finally {
      named.close();
    }
  });

  it("answers 404 for a tape without entries", async () => {
    assert.equal((await get("/s/nothing__here")).status, 404);
  });

  it("answers every tape name the store refuses (a '/', a '\\', a NUL, too long) with the same 404 page, on every route", async () => {
    const unknown = await get("/s/nothing__here");
    assert.match(await unknown.text(), /<h1>No such session<\/h1>/);
    assert.equal((await get("/s/nothing__here/events")).status, 404, "no live updates for a tape without entries");
    for (const name of ["a%2Fb", "a%5Cb", "%00", "x".repeat(201), "..%2F..%2Fetc%2Fpasswd"]) {
      const page = await get(`/s/${name}`);
      assert.equal(page.status, 404, name);
      assert.match(page.headers.get("content-type") ?? "", /^text\/html/, name);
      assert.match(await page.text(), /<h1>No such session<\/h1>/, name);
      const events = await get(`/s/${name}/events`);
      assert.equal(events.status, 404, `${name}/events`);
      await events.body?.cancel();
      const spill = await get(`/s/${name}/spill/0123456789abcdef`);
      assert.equal(spill.status, 404, `${name}/spill`);
      assert.match(((await spill.json()) as { error: string }).error, /^No tape named .* holds entries\.$/);
    }
    // A name right at the bound is valid, but its spill sidecar's is not: still a 404.
    assert.equal((await get(`/s/${"y".repeat(200)}/spill/0123456789abcdef`)).status, 404);
    // A path no route knows gets the same kind of page.
    const nowhere = await get("/s/");
    assert.equal(nowhere.status, 404);
    assert.match(await nowhere.text(), /<h1>Not found<\/h1>/);
  });

  it("searches every tape and links to the entry", async () => {
    const page = await (await get("/search?q=ZEBRA")).text();
    assert.match(page, new RegExp(`href="/s/${OTHER}\\?around=\\d+#e\\d+"`));
    assert.doesNotMatch(page, new RegExp(`href="/s/${TAPE}\\?`));
    assert.match(await (await get("/search?q=%3Cscript%3E")).text(), /<p class="snippet">thanks <mark>&lt;script&gt;<\/mark>alert\(1\)&lt;\/script&gt;<\/p>/, "the words, the match marked, no JSON");
    assert.match(await (await get("/search?q=nowhere-to-be-found")).text(), /No entry contains/);
  });

  it("loads spilled output from the spill sidecar, a few chunks at a time", async () => {
    const tape = "aaaa000000000000__ffff000000000000";
    const sidecar = createSpillSidecar({ threshold: 10 });
    const long = "x".repeat(100_000) + "END";
    const notice = await sidecar.spillToolResult(createTape({ name: tape, store, archivePath: dir.path, sidecars: [sidecar] }), long, { tool: "bash", runId: "run-1" });
    await writeTurn(store, tape, { user: "run it", tool: { name: "bash", arguments: "{}", result: notice }, answer: "done" });
    const page = await (await get(`/s/${tape}`)).text();
    const handle = /<button type="button" class="spill" data-handle="([0-9a-f]+)"/.exec(page)?.[1];
    assert.ok(handle, "a load button for the spilled result");
    const first = (await (await get(`/s/${tape}/spill/${handle}?cursor=0`)).json()) as { content: string; nextCursor: number; complete: boolean; chunks: number };
    assert.equal(first.complete, false);
    assert.equal(first.nextCursor, 4);
    let content = first.content;
    for (let cursor = first.nextCursor, done = false; !done; ) {
      const next = (await (await get(`/s/${tape}/spill/${handle}?cursor=${cursor}`)).json()) as typeof first;
      content += next.content;
      cursor = next.nextCursor;
      done = next.complete;
    }
    assert.equal(content, long);
    assert.equal((await get(`/s/${tape}/spill/0123456789abcdef`)).status, 404);
  });
});

describe("the web view on the SQLite store", () => {
  it("lists and shows the sessions of a SQLite store the same way", async () => {
    const dir = await tempDir("bub-ui-");
    const store = createSqliteTapeStore({ path: join(dir.path, "tapes.sqlite3") });
    await writeTurn(store, TAPE, { user: "hello from sqlite", tool: { name: "fs_read", arguments: "{}", result: "rows" }, answer: "stored in one file" });
    const ui = createUiApp({ store, token: TOKEN, port: () => PORT });
    try {
      const request = (path: string) => ui.app.request(path, { headers: { ...host, cookie: `bub_ui_${PORT}=${TOKEN}` } });
      assert.match(await (await request("/")).text(), /assistant: stored in one file/);
      const page = await (await request(`/s/${TAPE}`)).text();
      assert.match(page, /<div class="content text">hello from sqlite<\/div>/);
      assert.match(page, /<code>fs_read<\/code>/);
      assert.match(await (await request("/search?q=SQLITE")).text(), new RegExp(`href="/s/${TAPE}\\?around=`));
    } finally {
      ui.close();
      await store.close();
      await dir.cleanup();
    }
  });
});

describe("bub ui's server", () => {
  it("listens on 127.0.0.1 and streams a new turn to a live session page", async () => {
    const dir = await tempDir("bub-ui-");
    const store = createFileTapeStore({ directory: join(dir.path, "tapes") });
    await writeTurn(store, TAPE, { user: "first", answer: "one" });
    const server = await startUiServer({ store, port: 0, pollMs: 50 });
    try {
      assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{32}$/);
      assert.equal((await fetch(`http://127.0.0.1:${server.port}/`)).status, 401);
      const cookie = { cookie: `bub_ui_${server.port}=${server.token}` };
      const last = (await store.fetchAll({ tape: TAPE })).at(-1)!.id;
      const events = await fetch(`http://127.0.0.1:${server.port}/s/${TAPE}/events?from=2&last=${last}`, { headers: cookie });
      assert.equal(events.headers.get("content-type"), "text/event-stream");
      const reader = events.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      while (!text.includes("event: ready")) text += (await reader.read()).value ?? "";
      await writeTurn(store, TAPE, { user: "second question", answer: "two" });
      while (!text.includes("second question")) text += (await reader.read()).value ?? "";
      const update = JSON.parse(/event: update\ndata: (.*)\n/.exec(text)![1]!) as { from: number; last: number; html: string };
      assert.equal(update.from, 2);
      assert.equal(update.last, (await store.fetchAll({ tape: TAPE })).at(-1)!.id);
      assert.match(update.html, /<section class="turn" data-from="\d+"/);
      await reader.cancel();
    } finally {
      await server.close();
      await store.close();
      await dir.cleanup();
    }
  });

  it("sends the sessions list again when a session is added", async () => {
    const dir = await tempDir("bub-ui-");
    const store = createFileTapeStore({ directory: join(dir.path, "tapes") });
    await writeTurn(store, TAPE, { user: "first", answer: "one" });
    const server = await startUiServer({ store, port: 0, pollMs: 50 });
    try {
      const events = await fetch(`http://127.0.0.1:${server.port}/events`, { headers: { cookie: `bub_ui_${server.port}=${server.token}` } });
      const reader = events.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      while (!text.includes("event: sessions")) text += (await reader.read()).value ?? "";
      assert.doesNotMatch(text, new RegExp(OTHER));
      await writeTurn(store, OTHER, { user: "a new chat", answer: "hello there" });
      while (!text.includes(OTHER)) text += (await reader.read()).value ?? "";
      const last = JSON.parse(text.trimEnd().split("\n").filter((line) => line.startsWith("data: ")).at(-1)!.slice(6)) as { html: string };
      assert.match(last.html, /assistant: hello there/);
      await reader.cancel();
    } finally {
      await server.close();
      await store.close();
      await dir.cleanup();
    }
  });

  it("reports a port in use in one line", async () => {
    const dir = await tempDir("bub-ui-");
    const store = createFileTapeStore({ directory: join(dir.path, "tapes") });
    const first = await startUiServer({ store, port: 0 });
    try {
      await assert.rejects(startUiServer({ store, port: first.port }), new RegExp(`Port ${first.port} on 127\\.0\\.0\\.1 is in use. Choose another with --port`));
    } finally {
      await first.close();
      await dir.cleanup();
    }
  });
});
