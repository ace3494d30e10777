// `bub tape list` over 10,000 session tapes, on the installed package (the built CLI), as a
// whole process. Each tape is one agent turn with a tool call as the runtime writes it
// (15 entries, about 9 KB with the correlation ids: the bootstrap anchor, loop events, a
// 4.6 KB system prompt, the question, the tool call and its result, the answer, two `run`
// events), and every tape is in the name index (`.index.jsonl`), as tapes written since it
// exists are. Also timed: the same command on an empty BUB_HOME (what the command costs
// without tapes) and `node -e 0`. Budget: ≤ 1 s for 10,000 tapes.
//
//   node bench/tape/tape-list-command.ts [runs=10] [tapes=10000]
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { newCorrelationId, withCorrelation } from "../../src/kernel/correlation.ts";
import type { NewTapeEntry } from "../../src/kernel/tape-contract.ts";
import { encodeEntry, entries, prepareEntry } from "../../src/tape/entry.ts";
import { NAME_INDEX_FILE, nameIndexLine } from "../../src/tape/file-name-index.ts";
import { sessionTapeName } from "../../src/tape/tapes.ts";
import { expectSuccess, installBub, interleave, median, nodeBaseline, printMachine, printSamples, roundsArg, spawnTimed, tempDir, userEnv, type BenchCase } from "../support/processes.ts";

const BUDGET_MS = 1000;
const runs = roundsArg(2, 10);
const count = process.argv[3] === undefined ? 10_000 : Number(process.argv[3]);
if (!Number.isInteger(count) || count < 1 || count > 1_000_000) throw new Error(`tapes must be an integer from 1 to 1,000,000, got ${process.argv[3]}`);

const SYSTEM_PROMPT = "<general_instruct>\nFinish the task by calling tools or skills.\n</general_instruct>\n" + "- tool(args): what the tool does, in one line of about a hundred characters or so.\n".repeat(52);

/** One turn with a tool call, entry by entry as the agent writes it, with the correlation ids it would carry. */
function turnLines(turn: number): string {
  const turnId = newCorrelationId();
  const prompt = `sender_id=human|channel=$telegram|chat_id=${turn}\n---Date: 2026-11-25T01:06:04+00:00---\nwhat do my notes say?`;
  const batch: NewTapeEntry[] = [];
  const step = (ids: { modelCallId?: string; toolCallId?: string }, entry: NewTapeEntry) => batch.push(withCorrelation({ turnId, ...ids }, () => prepareEntry(entry)) as NewTapeEntry);
  const none = {};
  step(none, entries.anchor("session/start", { owner: "human" }));
  step(none, entries.event("handoff", { name: "session/start", state: { owner: "human" } }));
  step(none, entries.event("loop.start", { model: "openrouter:openrouter/free", prompt, allowed_skills: null, allowed_tools: null }));
  step(none, entries.event("loop.step.start", { step: 1, prompt }));
  const first = { modelCallId: newCorrelationId() };
  const run1 = { run_id: "run-20261125T010604887000Z" };
  const calls = { ...run1, tool_call_ids: ["call_notes"] };
  step(first, entries.system(SYSTEM_PROMPT, run1));
  step(first, entries.message({ role: "user", content: prompt }, run1));
  step(first, entries.toolCall([{ id: "call_notes", type: "function", function: { name: "fs_read", arguments: '{"path":"notes.txt"}' } }], calls));
  step(first, entries.toolResult(["buy milk\nwalk the dog\ncall the bank\n"], calls));
  step(first, entries.event("run", { status: "ok", usage: { prompt_tokens: 1200, completion_tokens: 10, total_tokens: 1210 }, provider: "openrouter", model: "openrouter:openrouter/free" }, run1));
  step(none, entries.event("loop.step", { step: 1, elapsed_ms: 396, status: "continue" }));
  const continued = "Continue the task until all targets are completed. [context: sender_id=human|channel=$telegram]";
  step(none, entries.event("loop.step.start", { step: 2, prompt: continued }));
  const second = { modelCallId: newCorrelationId() };
  const run2 = { run_id: "run-20261125T010605172000Z" };
  step(second, entries.message({ role: "user", content: continued }, run2));
  step(second, entries.message({ role: "assistant", content: "Your notes say: buy milk, walk the dog, call the bank." }, run2));
  step(second, entries.event("run", { status: "ok", usage: { prompt_tokens: 1300, completion_tokens: 18, total_tokens: 1318 }, provider: "openrouter", model: "openrouter:openrouter/free" }, run2));
  step(none, entries.event("loop.step", { step: 2, elapsed_ms: 12, status: "ok" }));
  return batch.map((entry, index) => `${encodeEntry(index + 1, prepareEntry(entry))}\n`).join("");
}

const { bin } = await installBub();
printMachine();
const home = tempDir("home");
const bubHome = join(home, ".bub");
const tapesDir = join(bubHome, "tapes");
mkdirSync(tapesDir, { recursive: true });
const started = performance.now();
const index: string[] = [];
let bytes = 0;
for (let turn = 0; turn < count; turn++) {
  const sessionId = `telegram:${100_000 + turn}`;
  const workspace = join(home, `workspace-${turn % 10}`);
  const tape = sessionTapeName(sessionId, workspace);
  const text = turnLines(turn);
  bytes += Buffer.byteLength(text);
  writeFileSync(join(tapesDir, `${tape}.jsonl`), text);
  index.push(nameIndexLine({ tape, sessionId, workspace }));
}
writeFileSync(join(tapesDir, NAME_INDEX_FILE), index.join(""));
console.log(`wrote ${count.toLocaleString("en-US")} tapes (${(bytes / 1024 / 1024).toFixed(1)} MiB, ${(bytes / count / 1024).toFixed(1)} KiB each) and their index in ${((performance.now() - started) / 1000).toFixed(1)} s`);

const emptyHome = join(home, "empty-bub");
const LIST = `bub tape list (${count.toLocaleString("en-US")} tapes)`;
function list(label: string, bubHomeDir: string, check: (stdout: string) => boolean): BenchCase {
  return {
    label,
    async run(rss) {
      const result = expectSuccess(label, await spawnTimed(bin, ["tape", "list"], { env: userEnv(home, { BUB_HOME: bubHomeDir }), cwd: home, rss }));
      if (!check(result.stdout) || result.stderr !== "") throw new Error(`${label}: unexpected output:\n${result.stdout.slice(0, 2000)}\n${result.stderr}`);
      return result;
    },
  };
}
const samples = await interleave(
  [
    nodeBaseline(home),
    list("bub tape list (no tapes)", emptyHome, (stdout) => stdout.startsWith("No session tapes yet")),
    list(LIST, bubHome, (stdout) => stdout.split("\n").length === count + 2 && stdout.includes("telegram:100000 ")),
  ],
  { runs, warmup: 2, rssRuns: 2 },
);
printSamples(samples);
const listed = median(samples.get(LIST)!.wallMs);
console.log(`\n${LIST}: median ${listed.toFixed(0)} ms; budget ≤ ${BUDGET_MS} ms: ${listed <= BUDGET_MS ? "met" : "NOT MET"}`);
