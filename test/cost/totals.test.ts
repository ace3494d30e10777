import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TapeEntry } from "../../src/kernel/tape-contract.ts";
import { checkBudgets, formatUsd } from "../../src/cost/budget.ts";
import { costRows, groupRows, storeCostRows, sumRows, type CostRow } from "../../src/cost/totals.ts";
import { turnUser } from "../../src/cost/user.ts";
import { CostLedger, LEDGER_MAX_AGE_MS, spendingOf } from "../../src/cost/ledger.ts";
import { buildCostReport, costGroupOf, formatCostReport, sinceDate } from "../../src/builtin/commands/cost-report.ts";
import { createMemoryTapeStore } from "../../src/tape/memory-store.ts";
import { entries } from "../../src/tape/entry.ts";

let id = 0;
function event(name: string, data: Record<string, unknown>, turn: string, date = "2026-12-01T10:00:00.000000+00:00"): TapeEntry {
  return { id: ++id, kind: "event", payload: { name, data }, meta: { turn_id: turn }, date };
}

function run(turn: string, usd: number | null, options: { model?: string; date?: string; prompt?: number } = {}): TapeEntry {
  const cost = usd === null ? { usd: null, source: "unknown" } : { usd, source: "catalog" };
  return event("run", { status: "ok", model: options.model ?? "openai:gpt-4o-mini", usage: { prompt_tokens: options.prompt ?? 100, completion_tokens: 10 }, cost }, turn, options.date);
}

describe("cost rows and totals", () => {
  const tape = [
    event("loop.start", { model: "openai:gpt-4o-mini", user: "telegram:7" }, "t1"),
    run("t1", 0.01),
    run("t1", null),
    event("loop.start", { model: "openai:gpt-4o", user: "telegram:8" }, "t2", "2026-12-02T09:00:00.000000+00:00"),
    run("t2", 0.25, { model: "openai:gpt-4o", date: "2026-12-02T09:00:01.000000+00:00" }),
    event("run", { status: "error", model: "openai:gpt-4o" }, "t2", "2026-12-02T09:00:02.000000+00:00"),
  ];
  const rows = costRows("tape-a", "telegram:1", tape);

  it("reads one row per run event, with its turn's user and a null price where none was known", () => {
    assert.equal(rows.length, 4);
    assert.deepEqual(rows.map((row) => [row.user, row.usd, row.inputTokens]), [["telegram:7", 0.01, 100], ["telegram:7", null, 100], ["telegram:8", 0.25, 100], ["telegram:8", null, 0]]);
  });

  it("sums rows, counting the calls without a price apart", () => {
    assert.deepEqual(sumRows(rows), { calls: 4, unpriced: 2, inputTokens: 300, outputTokens: 30, usd: 0.26 });
    assert.deepEqual([...groupRows(rows, "day").keys()], ["2026-12-01", "2026-12-02"]);
    assert.equal(groupRows(rows, "user").get("telegram:8")?.usd, 0.25);
    assert.equal(groupRows(rows, "model").get("openai:gpt-4o-mini")?.calls, 2);
  });

  it("builds the report: --since keeps later calls, the table marks partial and unknown sums", () => {
    const report = buildCostReport(rows, { by: "day", since: "2026-12-02T00:00:00.000Z", session: null });
    assert.deepEqual(report.total, { key: "total", calls: 2, unpriced_calls: 1, input_tokens: 100, output_tokens: 10, usd: 0.25 });
    const all = formatCostReport(buildCostReport(rows, { by: "turn", since: null, session: null }));
    assert.match(all, /^TURN +CALLS +INPUT +OUTPUT +USD\n/);
    assert.match(all, /\nt1 +2 +200 +20 +\$0\.0100\+\n/);
    assert.match(all, /\nTOTAL +4 +300 +30 +\$0\.2600\+\n/);
    assert.match(all, /2 calls have no known price/);
    assert.equal(formatCostReport(buildCostReport([], { by: "day", since: null, session: null })), "No model calls recorded yet (or none in the range asked for).\n");
  });

  it("parses --by and --since, refusing what it cannot use", () => {
    assert.equal(costGroupOf("chat"), "session");
    assert.equal(costGroupOf(undefined), "day");
    assert.throws(() => costGroupOf("week"), /--by week is not a grouping — use one of: day, session, model, user, turn, chat/);
    assert.equal(sinceDate("2d", new Date("2026-12-05T15:00:00Z")), "2026-12-03T00:00:00.000Z");
    assert.equal(sinceDate("2026-12-01"), "2026-12-01T00:00:00.000Z");
    assert.throws(() => sinceDate("yesterday"), /--since yesterday is not a date/);
  });

  it("reads every session tape of a store", async () => {
    const store = createMemoryTapeStore();
    await store.append("a", entries.event("run", { model: "m:x", usage: { prompt_tokens: 5, completion_tokens: 1 }, cost: { usd: 0.5, source: "config" } }));
    await store.append("b", entries.event("run", { model: "m:x", cost: { usd: 0.25, source: "config" } }));
    await store.append("b", entries.message({ role: "user", content: "hi" }));
    const all = await storeCostRows(store);
    assert.equal(sumRows(all).usd, 0.75);
    assert.equal(sumRows(await storeCostRows(store, { except: "a" })).usd, 0.25);
  });
});

describe("CostLedger", () => {
  it("sums other tapes by user and day, adds what this process priced, and reads the store again once its sums are old", async () => {
    const store = createMemoryTapeStore();
    const meta = { turn_id: "t" };
    await store.append("a", entries.event("loop.start", { user: "u:1" }, meta));
    await store.append("a", entries.event("run", { cost: { usd: 0.5, source: "config" } }, meta));
    await store.append("mine", entries.event("run", { cost: { usd: 9, source: "config" } }, meta));
    let now = 1_000_000;
    const ledger = new CostLedger(store, { now: () => now });
    const today = new Date().toISOString().slice(0, 10);
    const first = await ledger.spending("mine");
    assert.equal(first.byUser("u:1"), 0.5);
    assert.equal(first.byDay(today), 0.5, "the running turn's own tape is left out");
    ledger.charge("b", "u:1", new Date(), 0.25);
    await store.append("c", entries.event("run", { cost: { usd: 4, source: "config" } }, meta));
    assert.equal((await ledger.spending("mine")).byUser("u:1"), 0.75);
    assert.equal((await ledger.spending("mine")).byDay(today), 0.75, "the store is not read again within the age limit");
    now += LEDGER_MAX_AGE_MS;
    assert.equal((await ledger.spending("mine")).byDay(today), 4.5, "read again: c found, the charge of b no longer added (its tape holds it once merged)");
  });
});

describe("budgets", () => {
  const row = (usd: number | null, user: string, date: string): CostRow => ({ tape: "t", session: null, date, model: "m:x", usd, inputTokens: 0, outputTokens: 0, turnId: null, user });
  const now = new Date("2026-12-02T12:00:00Z");
  const session = [row(0.4, "u:1", "2026-12-01T10:00:00+00:00"), row(0.2, "u:1", "2026-12-02T10:00:00+00:00"), row(null, "u:1", "2026-12-02T11:00:00+00:00")];
  const others = [row(1, "u:2", "2026-12-02T09:00:00+00:00"), row(0.5, "u:1", "2026-11-30T09:00:00+00:00")];
  const charges = others.map((row) => ({ tape: row.tape, user: row.user, day: row.date.slice(0, 10), usd: row.usd ?? 0 }));
  const scope = { session, others: async () => spendingOf(charges, "mine"), user: "u:1", now };

  it("lets a call through under every budget, and never reads other sessions for a session budget", async () => {
    assert.equal(await checkBudgets({ session_usd: 1, user_usd: null, day_usd: null }, { ...scope, others: () => Promise.reject(new Error("read")) }), null);
    assert.equal(await checkBudgets({ session_usd: null, user_usd: 1.2, day_usd: 1.3 }, scope), null);
  });

  it("refuses once a budget is spent, naming it, what was spent and the setting to raise", async () => {
    const bySession = await checkBudgets({ session_usd: 0.6, user_usd: null, day_usd: null }, scope);
    assert.equal(bySession?.budget, "session");
    assert.equal(bySession?.message, "The session budget of $0.6000 is spent: this session spent $0.6000, so no more model calls. Raise BUB_BUDGET_SESSION_USD (budget.session_usd in config.yml) to go on.");
    const byUser = await checkBudgets({ session_usd: null, user_usd: 1.1, day_usd: null }, scope);
    assert.equal(byUser?.budget, "user");
    assert.ok(Math.abs((byUser?.spentUsd ?? 0) - 1.1) < 1e-9);
    const byDay = await checkBudgets({ session_usd: null, user_usd: null, day_usd: 1.2 }, scope);
    assert.equal(byDay?.budget, "day");
    assert.ok(Math.abs((byDay?.spentUsd ?? 0) - 1.2) < 1e-9);
  });

  it("formats dollars", () => {
    assert.equal(formatUsd(0.01234), "$0.0123");
    assert.equal(formatUsd(12.5), "$12.50");
  });
});

describe("turnUser", () => {
  it("is the sender the channel names, else the chat", () => {
    assert.equal(turnUser({ channel: "cli", chatId: "local", content: "hi", context: { sender_id: "ann" } }), "cli:ann");
    assert.equal(turnUser({ channel: "telegram", chatId: "-100", content: '{"message":"hi","sender_id":"42"}', context: {} }), "telegram:42");
    assert.equal(turnUser({ channel: "telegram", chatId: "-100", content: "{not json", context: {} }), "telegram:-100");
  });
});
