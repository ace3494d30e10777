// The parts of `bub replay`: reading a tape's turns, matching recorded tool calls, the replay
// plugin's decisions, the comparison and its text, the scratch copy.
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { withCorrelation } from "../../src/kernel/correlation.ts";
import type { TurnContext } from "../../src/kernel/turn-context.ts";
import type { NewTapeEntry, TapeEntry } from "../../src/kernel/tape-contract.ts";
import { entries, prepareEntry } from "../../src/tape/entry.ts";
import { compareTurns } from "../../src/replay/compare.ts";
import { createReplayPlugin, type ReplayCallRecord } from "../../src/replay/plugin.ts";
import { RecordedResults, recordedTurns, toolCallKey } from "../../src/replay/recorded.ts";
import { formatUsd, renderReplayText, replayJson } from "../../src/replay/render.ts";
import { scratchCopy } from "../../src/replay/scratch.ts";

let nextId = 0;
let clock = Date.parse("2026-11-25T10:00:00Z");

function stored(entry: NewTapeEntry, ids: { turnId?: string; modelCallId?: string } = {}, stepMs = 250): TapeEntry {
  const prepared = withCorrelation(ids, () => prepareEntry(entry));
  clock += stepMs;
  return { id: ++nextId, ...prepared, date: new Date(clock).toISOString().replace("Z", "000+00:00") };
}

function run(extra: Record<string, unknown> = {}) {
  return { status: "ok", usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 }, model: "openai:gpt-4o-mini", ...extra };
}

/** A turn with one tool call (fs_read of `path`, result `result`) and an answer. */
function toolTurn(turnId: string, question: string, path: string, result: string, answer: string, extra: Record<string, unknown> = {}): TapeEntry[] {
  const first = { turnId, modelCallId: `${turnId}-1` };
  const second = { turnId, modelCallId: `${turnId}-2` };
  const calls = { tool_call_ids: [`${turnId}-call`] };
  return [
    stored(entries.message({ role: "user", content: `sender_id=ann|channel=$telegram|chat_id=42\n---Date: 2026-11-25T10:00:00+00:00---\n${question}` }), first),
    stored(entries.toolCall([{ id: `${turnId}-call`, type: "function", function: { name: "fs_read", arguments: JSON.stringify({ path }) } }], calls), first),
    stored(entries.toolResult([result], calls), first),
    stored(entries.event("run", run(extra)), first),
    stored(entries.message({ role: "assistant", content: answer }), second, 1000),
    stored(entries.event("run", run(extra)), second),
  ];
}

describe("recordedTurns", () => {
  const tape = [...toolTurn("t1", "read a", "a.txt", "A1", "It says A1.", { cost: { usd: 0.001, source: "catalog" }, elapsed_ms: 40 }), ...toolTurn("t2", "read b", "b.txt", "B", "It says B.")];
  const turns = recordedTurns(tape, "x__y");

  it("gives each turn's words without the context line, its channel, answer and tool calls with results", () => {
    assert.deepEqual(
      turns.map((turn) => [turn.number, turn.prompt, turn.context.channel, turn.context.chat_id, turn.context.sender_id, turn.answer]),
      [
        [1, "read a", "telegram", "42", "ann", "It says A1."],
        [2, "read b", "telegram", "42", "ann", "It says B."],
      ],
    );
    assert.deepEqual(turns[0]!.toolCalls, [{ callId: "t1-call", name: "fs_read", arguments: '{"path":"a.txt"}', result: "A1", hasResult: true }]);
  });

  it("sums tokens and prices, and takes latency from elapsed_ms when every call has it, else from entry times", () => {
    assert.deepEqual({ ...turns[0]!.totals }, { modelCalls: 2, promptTokens: 200, completionTokens: 20, cachedTokens: null, costUsd: 0.002, elapsedMs: 80 });
    assert.deepEqual([turns[0]!.latencyMs, turns[0]!.latencySource], [80, "elapsed_ms"]);
    assert.equal(turns[1]!.totals.costUsd, null);
    assert.deepEqual([turns[1]!.latencyMs, turns[1]!.latencySource], [2000, "timestamps"]);
  });
});

describe("RecordedResults", () => {
  it("matches on the tool and the arguments, whatever their key order and spacing, first recorded first", () => {
    const recorded = new RecordedResults(recordedTurns([...toolTurn("t1", "q", "a.txt", "first", "x"), ...toolTurn("t2", "q", "a.txt", "second", "y")], "x__y"));
    assert.deepEqual(recorded.take("fs.read", { path: "a.txt" }), { found: true, result: "first" });
    assert.deepEqual(recorded.take("fs_read", '{ "path" : "a.txt" }'), { found: true, result: "second" });
    assert.deepEqual(recorded.take("fs_read", { path: "a.txt" }), { found: false });
    assert.deepEqual(recorded.take("fs_read", { path: "b.txt" }), { found: false });
    assert.equal(toolCallKey("x", { b: 1, a: [1, { d: 2, c: 3 }] }), toolCallKey("x", '{"a":[1,{"c":3,"d":2}],"b":1}'));
  });
});

describe("the replay plugin", () => {
  const recorded = () => new RecordedResults(recordedTurns(toolTurn("t1", "q", "a.txt", "A", "x"), "x__y"));
  const ask = (plugin: ReturnType<typeof createReplayPlugin>, tool: string, args: Record<string, unknown>, callId: string) =>
    plugin.beforeToolCall?.({ call: { runId: "r", tool, arguments: args, callId }, state: {}, context: {} as TurnContext, signal: new AbortController().signal });

  it("hands back recorded results, refuses bash and web.fetch unless live, lets the rest run, and logs each", async () => {
    const log: ReplayCallRecord[] = [];
    const plugin = createReplayPlugin({ recorded: recorded(), scratch: "/scratch", live: false, log });
    const reused = await ask(plugin, "fs_read", { path: "a.txt" }, "c1");
    assert.deepEqual([reused?.action, reused?.action === "replace" ? reused.result : null], ["replace", "A"]);
    const refused = await ask(plugin, "bash", { cmd: "ls" }, "c2");
    assert.equal(refused?.action, "deny");
    assert.equal((await ask(plugin, "web.fetch", { url: "http://x" }, "c3"))?.action, "deny");
    assert.equal(await ask(plugin, "fs_read", { path: "a.txt" }, "c4"), null);
    assert.deepEqual(log.map((each) => [each.callId, each.source]), [
      ["c1", "reused"],
      ["c2", "refused"],
      ["c3", "refused"],
      ["c4", "run"],
    ]);
    const sandbox = await plugin.provideSandbox?.({ sessionId: "s", workspace: "/w" });
    assert.equal(sandbox?.workspace, "/scratch");
  });

  it("with live, bash runs", async () => {
    const log: ReplayCallRecord[] = [];
    const plugin = createReplayPlugin({ recorded: recorded(), scratch: "/scratch", live: true, log });
    assert.equal(await ask(plugin, "bash", { cmd: "ls" }, "c1"), null);
    assert.deepEqual(log, [{ callId: "c1", tool: "bash", source: "run" }]);
  });
});

describe("compareTurns and its text", () => {
  const original = recordedTurns(toolTurn("t1", "read a", "a.txt", "A", "The file says A.", { cost: { usd: 0.0015, source: "catalog" } }), "o__o");
  const replay = recordedTurns(toolTurn("r1", "read a", "a.txt", "A", "Your file says A."), "r__r");
  const log: ReplayCallRecord[] = [{ callId: "r1-call", tool: "fs_read", source: "reused" }];
  const report = compareTurns(original, replay, log, {
    original: { sessionId: "cli:local", tape: "o__o" },
    replay: { sessionId: "cli:local/replay-1", tape: "r__r", model: "openai:gpt-4o", plugins: [], live: false, scratch: null },
  });

  it("diffs the answers word by word and marks the reused call", () => {
    assert.equal(report.turns[0]!.sameAnswer, false);
    assert.deepEqual(report.turns[0]!.diff, [
      { op: "removed", text: "The" },
      { op: "added", text: "Your" },
      { op: "equal", text: " file says A." },
    ]);
    assert.deepEqual(report.turns[0]!.replay?.toolCalls, [{ name: "fs_read", arguments: '{"path":"a.txt"}', source: "reused" }]);
    assert.equal(report.totals.replay.reusedToolCalls, 1);
  });

  it("prints prices where known and a dash where not", () => {
    const text = renderReplayText(report);
    assert.match(text, /\n {2}cost +\$0\.0030 +—\n/);
    assert.match(text, /\n {4}\[-The-\]\{\+Your\+\} file says A\.\n/);
    assert.match(text, /\[reused\] fs_read \{"path":"a\.txt"\}/);
    assert.equal(formatUsd(null), "—");
    assert.equal(formatUsd(1.5), "$1.50");
    const json = replayJson(report) as { turns: { original: { cost_usd: number } }[] };
    assert.equal(json.turns[0]!.original.cost_usd, 0.003);
  });

  it("a turn only one side has is compared with nothing", () => {
    const longer = compareTurns([...original, ...original], replay, [], report);
    assert.equal(longer.turns[1]!.replay, null);
    assert.match(renderReplayText(longer), /\(no such turn\)/);
  });
});

describe("scratchCopy", () => {
  it("copies the workspace without bub's home inside it, and removes the copy", async () => {
    const workspace = await mkdtemp(join(tmpdir(), "bub-replay-test-"));
    try {
      await mkdir(join(workspace, "src"));
      await writeFile(join(workspace, "src", "a.txt"), "a");
      await mkdir(join(workspace, ".bub", "tapes"), { recursive: true });
      await writeFile(join(workspace, ".bub", "tapes", "t.jsonl"), "{}");
      const scratch = await scratchCopy(workspace, { exclude: [join(workspace, ".bub")] });
      assert.equal(await readFile(join(scratch.path, "src", "a.txt"), "utf8"), "a");
      await assert.rejects(stat(join(scratch.path, ".bub")));
      await scratch.remove();
      await assert.rejects(stat(scratch.path));
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
  });
});

describe("replay session names", () => {
  it("stamp the UTC time to the millisecond, so two replays started within a second get sessions of their own", async () => {
    const { replayStamp } = await import("../../src/builtin/commands/replay-run.ts");
    assert.equal(replayStamp(new Date("2026-12-01T17:37:00.123Z")), "20261201T173700123Z");
    assert.notEqual(replayStamp(new Date("2026-12-01T17:37:00.123Z")), replayStamp(new Date("2026-12-01T17:37:00.456Z")));
  });
});
