import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TapeEntry } from "../../src/kernel/tape-contract.ts";
import { entries } from "../../src/tape/entry.ts";
import { createMemoryTapeStore } from "../../src/tape/memory-store.ts";
import { createUiApp } from "../../src/ui/app.ts";
import { formatUsd } from "../../src/ui/format.ts";
import { renderMarkdown } from "../../src/ui/markdown.ts";
import { splitPrompt } from "../../src/ui/message.ts";
import { turnNumbers } from "../../src/ui/numbering.ts";
import { buildTranscript } from "../../src/tape/transcript.ts";
import { readOverview } from "../../src/ui/overview.ts";
import { highlighted, readableEntry } from "../../src/ui/search-view.ts";
import { turnSpans } from "../../src/ui/turn-chart.ts";
import { costOf } from "../../src/ui/turns.ts";
import { writeTurn } from "./support.ts";

/** Entries with ids and the given dates (ISO, tape form). */
function dated(list: ReturnType<typeof entries.event>[], dates: string[]): TapeEntry[] {
  return list.map((entry, index) => ({ ...entry, id: index + 1, date: dates[index] ?? dates.at(-1)! }));
}

describe("the web view's pieces", () => {
  it("renders Markdown and lets no script, handler, style or frame through", () => {
    const out = renderMarkdown("# Plan\n\n- one\n- two\n\n```js\nlet a = 1 < 2;\n```\n\n<script>window.hit = 1</script>\n\n<img src=x onerror=\"window.hit=1\">\n\n[link](javascript:alert(1)) [site](https://example.org)\n\n<iframe src=\"https://example.org\"></iframe><style>body{}</style>").value;
    assert.match(out, /<h1>Plan<\/h1>/);
    assert.match(out, /<ul>\n<li>one<\/li>\n<li>two<\/li>\n<\/ul>/);
    assert.match(out, /<pre><code class="language-js">let a = 1 &lt; 2;\n<\/code><\/pre>/);
    assert.match(out, /&lt;script&gt;window.hit = 1&lt;\/script&gt;/, "HTML in the Markdown is shown as text");
    assert.doesNotMatch(out, /<(script|img|iframe|style)\b/i, "no such element");
    assert.doesNotMatch(out, /href="javascript/i);
    assert.match(out, /<a href="https:\/\/example.org" rel="noopener noreferrer nofollow">site<\/a>/);
    assert.match(out, /<a rel="noopener noreferrer nofollow">link<\/a>/, "a javascript: link loses its target");
  });

  it("numbers turns as bub tape show does, a turn written in two parts keeping its number", () => {
    const turn = (id: string, list: ReturnType<typeof entries.event>[]) => list.map((entry) => ({ ...entry, meta: { ...entry.meta, turn_id: id } }));
    const list = dated(
      [
        entries.anchor("session/start", {}),
        ...turn("a", [entries.message({ role: "user", content: "one" }), entries.message({ role: "assistant", content: "1" })]),
        ...turn("b", [entries.message({ role: "user", content: "two" })]),
        ...turn("a", [entries.event("run", {})]),
        ...turn("b", [entries.message({ role: "assistant", content: "2" })]),
        entries.event("loop.start", {}),
        entries.message({ role: "user", content: "three, no turn id" }),
      ],
      ["2026-05-01T10:00:00+00:00"],
    );
    const numbers = turnNumbers(list);
    const expected = new Map<number, number>();
    for (const part of buildTranscript(list, { tape: "t" }).turns) for (const item of part.items) if (part.number !== null) expected.set(item.id, part.number);
    for (const [id, number] of expected) assert.equal(numbers.get(id), number, `entry ${id}`);
    assert.deepEqual([...numbers.values()], [1, 1, 2, 1, 2, 3, 3]);
    assert.equal(numbers.has(1), false, "the anchor before the first turn has none");
  });

  it("splits the channel's context header from the user's words", () => {
    assert.deepEqual(splitPrompt("sender_id=7|channel=telegram\n---Date: 2026-05-01T10:00:00+02:00---\nhello\nthere"), { header: "sender_id=7|channel=telegram\n2026-05-01T10:00:00+02:00", words: "hello\nthere" });
    assert.deepEqual(splitPrompt("just words"), { header: null, words: "just words" });
    assert.deepEqual(splitPrompt("Continue the task. [context: sender_id=7|channel=cli]"), { header: "sender_id=7|channel=cli", words: "Continue the task." });
  });

  it("places a step's model call and tool calls backwards from its run event", () => {
    const list = dated(
      [
        entries.message({ role: "user", content: "go" }),
        entries.toolCall([{ id: "a", type: "function", function: { name: "bash", arguments: "{}" } }, { id: "b", type: "function", function: { name: "fs_read", arguments: "{}" } }]),
        entries.toolResult(["x", "y"]),
        entries.event("run", { status: "ok", model: "m:1", elapsed_ms: 1000, tool_elapsed_ms: [500, 250] }),
        entries.message({ role: "assistant", content: "done" }),
        entries.event("run", { status: "ok", model: "m:1", elapsed_ms: 400 }),
      ],
      ["2026-05-01T10:00:00.000000+00:00", "2026-05-01T10:00:01.600000+00:00", "2026-05-01T10:00:01.600000+00:00", "2026-05-01T10:00:01.600000+00:00", "2026-05-01T10:00:02.100000+00:00", "2026-05-01T10:00:02.100000+00:00"],
    );
    const t0 = Date.parse("2026-05-01T10:00:00Z");
    const spans = turnSpans(list).map((span) => [span.kind, span.label, span.start - t0, span.end - t0, span.measured]);
    assert.deepEqual(spans, [
      ["model", "m:1", 100, 1100, true],
      ["tool", "bash", 1100, 1600, true],
      ["tool", "fs_read", 1100, 1350, true],
      ["model", "m:1", 1700, 2100, true],
    ]);
  });

  it("sums the known prices and says how many calls had one", () => {
    const list = dated([entries.event("run", { cost: { usd: 0.002, source: "catalog" } }), entries.event("run", { cost: { usd: null, source: "unknown" } }), entries.event("run", { cost: { usd: 0.0005, source: "config" } }), entries.event("run", {})], ["2026-05-01T10:00:00+00:00"]);
    const total = costOf(list);
    assert.equal(total.calls, 4);
    assert.equal(total.priced, 2);
    assert.ok(Math.abs((total.usd ?? 0) - 0.0025) < 1e-12);
    assert.equal(costOf(list.slice(1, 2)).usd, null);
    assert.equal(formatUsd(null), "—");
    assert.equal(formatUsd(0.0025), "$0.0025");
    assert.equal(formatUsd(1.5), "$1.50");
  });

  it("shows a hit's readable text with every match marked", () => {
    const call = { ...entries.toolCall([{ id: "a", type: "function", function: { name: "bash", arguments: '{"command":"grep Zebra notes"}' } }]), id: 1, date: "2026-05-01T10:00:00+00:00" };
    assert.deepEqual(readableEntry(call), { what: "tool call", text: "bash(grep Zebra notes)" });
    assert.equal(highlighted("a zebra and a ZEBRA <b>", "zebra").value, "a <mark>zebra</mark> and a <mark>ZEBRA</mark> &lt;b&gt;");
    assert.equal(highlighted(`${"x".repeat(300)} needle`, "needle", 40).value.startsWith("…"), true, "a long text is cut around the match");
  });

  it("reads tokens and cost per day and the slowest turns from every tape", async () => {
    const store = createMemoryTapeStore();
    await writeTurn(store, "t1", { user: "slow one", answer: "a", date: new Date("2026-05-01T10:00:00Z") });
    await writeTurn(store, "t2", { user: "first day again", answer: "b", date: new Date("2026-05-01T11:00:00Z") });
    await store.appendBatch!("t2", [entries.event("loop.start", { model: "m" }), entries.message({ role: "user", content: "next day" }), entries.event("run", { usage: { total_tokens: 50 }, cost: { usd: 0.25, source: "catalog" } })].map((entry, index) => ({ ...entry, date: `2026-05-02T09:00:0${index * 4}.000000+00:00` })));
    const overview = await readOverview(store);
    assert.equal(overview.sessions, 2);
    assert.deepEqual(overview.days.map((day) => [day.day, day.calls, day.tokens, day.usd]), [["2026-05-01", 2, 2 * 110, null], ["2026-05-02", 1, 50, 0.25]]);
    assert.deepEqual(overview.slowest.slice(0, 1).map((turn) => [turn.tape, turn.number, turn.durationMs, turn.prompt]), [["t2", 2, 8000, "next day"]]);
  });

  it("serves the overview and the chart library from its own files, under the same policy", async () => {
    const store = createMemoryTapeStore();
    await writeTurn(store, "t1", { user: "hello", answer: "hi" });
    const ui = createUiApp({ store, token: "tok", port: () => 9 });
    try {
      const get = (path: string) => ui.app.request(path, { headers: { host: "127.0.0.1:9", cookie: "bub_ui_9=tok" } });
      const page = await get("/overview");
      assert.equal(page.status, 200);
      assert.match(page.headers.get("content-security-policy") ?? "", /script-src 'self';/);
      const text = await page.text();
      assert.match(text, /<script src="\/assets\/uplot.js" defer><\/script><script src="\/assets\/charts.js" defer><\/script>/);
      assert.match(text, /data-days="\[\{&quot;day&quot;:&quot;\d{4}-\d\d-\d\d&quot;,&quot;tokens&quot;:110,&quot;usd&quot;:null\}\]"/);
      const library = await get("/assets/uplot.js");
      assert.match(library.headers.get("content-type") ?? "", /^text\/javascript/);
      assert.match(await library.text(), /uPlot/);
      assert.match(await (await get("/assets/uplot.css")).text(), /\.uplot/);
    } finally {
      ui.close();
    }
  });
});
