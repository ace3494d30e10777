/**
 * Cost, budgets and the context budget (issue 37) on the installed binary, against the fake
 * OpenAI-compatible server with scripted usage: `bub cost` totals from the prices recorded
 * on the tape, a session budget refusing the next turn before any model call, and a long
 * session handed off onto a summary before its context overflows, every entry kept.
 */
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from "../support/fake-openai.ts";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";

type Home = Awaited<ReturnType<typeof tempHome>>;

/** A home whose config.yml prices (or sizes) `local:small-model`; the env points bub at the fake server. */
async function homeWith(openai: FakeOpenAI, config: string, extra: Record<string, string> = {}): Promise<{ home: Home; env: Record<string, string> }> {
  const home = await tempHome();
  const bubHome = join(home.path, ".bub");
  await mkdir(bubHome, { recursive: true });
  await writeFile(join(bubHome, "config.yml"), config);
  return { home, env: { BUB_HOME: bubHome, BUB_MODEL: "local:small-model", BUB_LOCAL_API_BASE: openai.url, ...extra } };
}

const PRICED = 'cost:\n  models:\n    "local:small-model":\n      input_per_mtok: 1000\n      output_per_mtok: 2000\n';
/** 100 input tokens at $1000/M and 10 output tokens at $2000/M: $0.12 a call. */
const USAGE = { prompt_tokens: 100, completion_tokens: 10 };

function tapeLines(stdout: string): { kind: string; payload: Record<string, unknown>; meta: Record<string, unknown> }[] {
  return stdout.trimEnd().split("\n").map((line) => JSON.parse(line));
}

function text(request: RecordedRequest): string {
  return JSON.stringify(request.body.messages);
}

describe("bub cost, budgets and the context budget (installed package)", () => {
  let openai: FakeOpenAI;
  const homes: Home[] = [];
  before(async () => {
    await installedPackage();
    openai = await startFakeOpenAI();
  });
  after(async () => {
    await openai.close();
    for (const home of homes) await home.cleanup();
  });

  it("records each call's price on its run event and sums them by day, session and model, as a table or JSON", async () => {
    const { home, env } = await homeWith(openai, PRICED);
    homes.push(home);
    openai.script(reply.text("one", { usage: USAGE }), reply.text("two", { usage: USAGE }), reply.text("three", { usage: USAGE }));
    for (const args of [["run", "first"], ["run", "second"], ["run", "--session-id", "cli:other", "third"]]) {
      const run = await runBub(args, { home: home.path, env });
      assert.equal(run.code, 0, run.stderr);
    }
    const exported = await runBub(["tape", "export", "cli:local"], { home: home.path, env });
    const runs = tapeLines(exported.stdout).filter((entry) => entry.kind === "event" && entry.payload.name === "run");
    assert.deepEqual(runs.map((entry) => (entry.payload.data as Record<string, unknown>).cost), [{ usd: 0.12, source: "config" }, { usd: 0.12, source: "config" }]);

    const json = await runBub(["cost", "--json", "--by", "session"], { home: home.path, env });
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout);
    assert.equal(report.total.calls, 3);
    assert.equal(report.total.unpriced_calls, 0);
    assert.equal(report.total.input_tokens, 300);
    assert.ok(Math.abs(report.total.usd - 0.36) < 1e-9, String(report.total.usd));
    const bySession = Object.fromEntries(report.groups.map((group: { key: string; usd: number }) => [group.key, Math.round(group.usd * 100) / 100]));
    assert.deepEqual(bySession, { "cli:local": 0.24, "cli:other": 0.12 });

    const one = JSON.parse((await runBub(["cost", "--json", "--session", "cli:other"], { home: home.path, env })).stdout);
    assert.equal(one.total.calls, 1);
    const table = await runBub(["cost", "--by", "model"], { home: home.path, env });
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^MODEL +CALLS +INPUT +OUTPUT +USD\nlocal:small-model +3 +300 +30 +\$0\.3600\nTOTAL +3 +300 +30 +\$0\.3600\n$/);
    const bad = await runBub(["cost", "--since", "someday"], { home: home.path, env });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^bub: --since someday is not a date — give an ISO date such as 2026-12-01, or a number of days such as 7d\n$/);
  });

  it("refuses the turn after the session budget is spent, before any model call, with one line and an event on the tape", async () => {
    const { home, env } = await homeWith(openai, PRICED, { BUB_BUDGET_SESSION_USD: "0.2" });
    homes.push(home);
    openai.script(reply.text("one", { usage: USAGE }), reply.text("two", { usage: USAGE }));
    for (const prompt of ["first", "second"]) {
      const run = await runBub(["run", prompt], { home: home.path, env });
      assert.equal(run.code, 0, run.stderr);
    }
    const asked = openai.requests.length;
    const refused = await runBub(["run", "third"], { home: home.path, env });
    assert.equal(openai.requests.length, asked, "no model call after the budget is spent");
    assert.notEqual(refused.code, 0);
    assert.equal(
      refused.stderr,
      "bub: The session budget of $0.2000 is spent: this session spent $0.2400, so no more model calls — raise BUB_BUDGET_SESSION_USD (budget.session_usd in config.yml) to go on\n",
    );
    const entries = tapeLines((await runBub(["tape", "export", "cli:local"], { home: home.path, env })).stdout);
    const event = entries.find((entry) => entry.kind === "event" && entry.payload.name === "budget.refused");
    assert.ok(event, "budget.refused on the tape");
    assert.deepEqual({ ...(event.payload.data as Record<string, unknown>), date: undefined }, { budget: "session", limit_usd: 0.2, spent_usd: 0.24, user: "cli:human", step: 1, date: undefined });
    const refusedPrompt = entries.find((entry) => entry.kind === "message" && String(entry.payload.content).endsWith("third"));
    assert.equal(refusedPrompt?.meta.context, false);
  });

  it("counts a user's spending across sessions: another session of the same sender is refused, another sender is not", async () => {
    const { home, env } = await homeWith(openai, PRICED, { BUB_BUDGET_USER_USD: "0.1" });
    homes.push(home);
    openai.script(reply.text("for ann", { usage: USAGE }), reply.text("for bob", { usage: USAGE }));
    const first = await runBub(["run", "--sender-id", "ann", "--session-id", "cli:a", "one"], { home: home.path, env });
    assert.equal(first.code, 0, first.stderr);
    const asked = openai.requests.length;
    const again = await runBub(["run", "--sender-id", "ann", "--session-id", "cli:b", "two"], { home: home.path, env });
    assert.equal(openai.requests.length, asked);
    assert.match(again.stderr, /^bub: The user budget of \$0\.1000 is spent: you spent \$0\.1200, so no more model calls — raise BUB_BUDGET_USER_USD/);
    const other = await runBub(["run", "--sender-id", "bob", "--session-id", "cli:b", "three"], { home: home.path, env });
    assert.equal(other.code, 0, other.stderr);
    assert.match(other.stdout, /for bob/);
    const report = JSON.parse((await runBub(["cost", "--by", "user", "--json"], { home: home.path, env })).stdout);
    assert.deepEqual(report.groups.map((group: { key: string; calls: number }) => [group.key, group.calls]), [["cli:ann", 1], ["cli:bob", 1]]);
  });

  it("hands off onto a summary before the context would pass 80% of a small window, tells the user, and keeps every entry", async () => {
    const { home, env } = await homeWith(openai, 'cost:\n  models:\n    "local:small-model":\n      context_window: 1000\n');
    homes.push(home);
    const before = openai.requests.length;
    openai.script(
      reply.text("Apples are red.", { usage: { prompt_tokens: 700, completion_tokens: 50 } }),
      reply.text("Pears are green.", { usage: { prompt_tokens: 790, completion_tokens: 30 } }),
      // The summary call, then the third turn's own call, which overflows if the first turns are still in it.
      reply.text("They asked about apples (red) and pears (green).", { usage: { prompt_tokens: 850, completion_tokens: 20 } }),
      (request) => (text(request).includes("first question about apples") ? reply.contextLength(1000) : reply.text("Plums are purple.", { usage: { prompt_tokens: 120, completion_tokens: 10 } })),
    );
    for (const prompt of ["first question about apples", "second question about pears"]) {
      const run = await runBub(["run", prompt], { home: home.path, env });
      assert.equal(run.code, 0, run.stderr);
      assert.doesNotMatch(run.stdout, /summarised/);
    }
    const third = await runBub(["run", "third question about plums"], { home: home.path, env });
    assert.equal(third.code, 0, third.stderr);
    assert.equal(
      third.stdout,
      "[cli:local]\n(Earlier turns were summarised to keep the context within 80% of the model's 1,000-token window; `bub tape show cli:local` shows them in full.)\n\nPlums are purple.\n",
    );
    const [summaryCall, turnCall] = openai.requests.slice(before + 2);
    assert.match(text(summaryCall), /Summarise the conversation so far/);
    assert.match(text(summaryCall), /first question about apples/);
    assert.match(text(turnCall), /They asked about apples \(red\) and pears \(green\)\./);
    assert.doesNotMatch(text(turnCall), /first question about apples/);

    const entries = tapeLines((await runBub(["tape", "export", "cli:local"], { home: home.path, env })).stdout);
    const summary = entries.filter((entry) => entry.meta.handoff_summary === "auto_handoff/context_budget");
    assert.equal(summary.length, 1);
    assert.match(String(summary[0].payload.content), /\nThey asked about apples \(red\) and pears \(green\)\.$/);
    const users = entries.filter((entry) => entry.kind === "message" && entry.payload.role === "user" && !entry.meta.handoff_summary).map((entry) => String(entry.payload.content).split("\n").at(-1));
    assert.deepEqual(users, ["first question about apples", "second question about pears", "third question about plums"]);
    const anchor = entries.find((entry) => entry.kind === "anchor" && entry.payload.name === "auto_handoff/context_budget");
    assert.equal((anchor?.payload.state as Record<string, unknown>).summary, "They asked about apples (red) and pears (green).");
    assert.ok(!entries.some((entry) => entry.kind === "error"), "no overflow error");
    const runs = entries.filter((entry) => entry.kind === "event" && entry.payload.name === "run").map((entry) => entry.payload.data as Record<string, unknown>);
    assert.equal(runs.length, 4);
    assert.deepEqual(runs[0].cost, { usd: null, source: "unknown" });
    assert.equal(runs[2].purpose, "context_summary");

    openai.script(reply.text("unused"));
    const info = await runBub(["run", ",tape.info"], { home: home.path, env });
    assert.match(info.stdout, /^context_used: \d+ of 1,000 tokens \(\d+\.\d%; hand-off at 80%\)$/m);
  });
});
