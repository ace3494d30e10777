// What cost tracking adds: pricing one model call (the first one imports the catalog), and
// reading every tape's run events, the work of `bub cost` and of a user or day budget
// (once per turn, see src/cost/ledger.ts), over a file store of 1,000 session tapes of 20 turns.
// Run: node bench/cost/totals.ts
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { priceCall } from "../../src/cost/pricing.ts";
import { storeCostRows, sumRows } from "../../src/cost/totals.ts";
import { CostLedger } from "../../src/cost/ledger.ts";
import { createFileTapeStore } from "../../src/tape/file-store.ts";
import { encodeEntry, entries, prepareEntry } from "../../src/tape/entry.ts";
import { median, printTable, scratchDirectory, timed } from "../tape/shape.ts";

const TAPES = 1_000;
const TURNS = 20;
const RUNS = 10;
const name = (index: number) => `${index.toString(16).padStart(16, "0")}__${(index * 7919).toString(16).padStart(16, "0")}`;
const usage = { prompt_tokens: 1200, completion_tokens: 80, prompt_tokens_details: { cached_tokens: 1024 } };

const rows: string[][] = [];
const first = await timed(async () => void (await priceCall("openai:gpt-4o-mini", usage, {})));
const each: number[] = [];
for (let run = 0; run < 1_000; run++) each.push(await timed(async () => void (await priceCall("anthropic:claude-sonnet-4-5", usage, {}))));
rows.push(["priceCall, first (imports the catalog)", `${first.toFixed(2)} ms`, "-"]);
rows.push(["priceCall, each after", `${median(each).toFixed(3)} ms`, `${Math.max(...each).toFixed(3)} ms`]);

const scratch = scratchDirectory("cost");
try {
  for (let index = 0; index < TAPES; index++) {
    const lines: string[] = [];
    let id = 0;
    const add = (entry: ReturnType<typeof entries.event>) => lines.push(encodeEntry(++id, prepareEntry(entry)));
    add(entries.anchor("session/start", { owner: "human" }));
    for (let turn = 0; turn < TURNS; turn++) {
      const meta = { turn_id: `t-${index}-${turn}` };
      add(entries.event("loop.start", { model: "openai:gpt-4o-mini", user: `telegram:${index % 50}` }, meta));
      add(entries.message({ role: "user", content: "a question of a few words ".repeat(8) }, meta));
      add(entries.message({ role: "assistant", content: "an answer of some length ".repeat(40) }, meta));
      add(entries.event("run", { status: "ok", usage, provider: "openai", model: "openai:gpt-4o-mini", cost: { usd: 0.0001512, source: "catalog" } }, meta));
      add(entries.event("loop.step", { step: 1, status: "ok" }, meta));
    }
    writeFileSync(join(scratch.path, `${name(index)}.jsonl`), `${lines.join("\n")}\n`);
  }
  const times: number[] = [];
  const cold: number[] = [];
  const warm: number[] = [];
  let calls = 0;
  for (let run = 0; run < RUNS; run++) {
    const store = createFileTapeStore({ directory: scratch.path });
    times.push(await timed(async () => (calls = sumRows(await storeCostRows(store)).calls)));
    await store.close?.();
    // A budget check: a fresh process (cold), then the next turn of a gateway after it priced a call (warm).
    const gateway = createFileTapeStore({ directory: scratch.path });
    const ledger = new CostLedger(gateway);
    cold.push(await timed(() => ledger.spending(name(0))));
    ledger.charge(name(run + 1), "telegram:1", new Date(), 0.0001512);
    warm.push(await timed(() => ledger.spending(name(0))));
    await gateway.close?.();
  }
  rows.push([`bub cost: read ${calls.toLocaleString("en-US")} run events of ${TAPES} tapes`, `${median(times).toFixed(1)} ms`, `${Math.max(...times).toFixed(1)} ms`]);
  rows.push(["user/day budget, first turn of a process", `${median(cold).toFixed(1)} ms`, `${Math.max(...cold).toFixed(1)} ms`]);
  rows.push(["user/day budget, next turn within 30 s", `${median(warm).toFixed(1)} ms`, `${Math.max(...warm).toFixed(1)} ms`]);
} finally {
  scratch.remove();
}
printTable(["what", "median", "worst"], rows);
