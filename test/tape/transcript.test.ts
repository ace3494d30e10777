// A tape as a transcript (turns, items, usage) and its text and Markdown forms.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { withCorrelation } from "../../src/kernel/correlation.ts";
import type { NewTapeEntry, TapeEntry } from "../../src/kernel/tape-contract.ts";
import { entries, prepareEntry } from "../../src/tape/entry.ts";
import { buildTranscript } from "../../src/tape/transcript.ts";
import { renderTranscriptMarkdown, renderTranscriptText } from "../../src/tape/transcript-render.ts";
import { bubError } from "./support/helpers.ts";

let nextId = 0;
let clock = Date.parse("2026-11-25T10:00:00Z");

function stored(entry: NewTapeEntry, ids: { turnId?: string; modelCallId?: string; toolCallId?: string } = {}): TapeEntry {
  const prepared = withCorrelation(ids, () => prepareEntry(entry));
  clock += 250;
  return { id: ++nextId, ...prepared, date: new Date(clock).toISOString().replace("Z", "000+00:00") };
}

/** One turn as the agent writes it: a tool call, its result, the answer, two model calls with usage. */
function toolTurn(turnId: string, question: string): TapeEntry[] {
  const first = { turnId, modelCallId: `${turnId}-m1` };
  const second = { turnId, modelCallId: `${turnId}-m2` };
  const calls = { run_id: "r1", tool_call_ids: ["call_1"] };
  return [
    stored(entries.event("loop.start", { model: "openai:gpt-4o-mini", prompt: question }), { turnId }),
    stored(entries.system("You are a test agent.", { run_id: "r1" }), first),
    stored(entries.message({ role: "user", content: `sender_id=human|channel=$cli|chat_id=local\n---Date: 2026-11-25T10:00:00+00:00---\n${question}` }, { run_id: "r1" }), first),
    stored(entries.toolCall([{ id: "call_1", type: "function", function: { name: "fs_read", arguments: '{"path":"notes.txt"}' } }], calls), first),
    stored(entries.toolResult(["buy milk\nwalk the dog"], calls), first),
    stored(entries.event("run", { status: "ok", usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 }, model: "openai:gpt-4o-mini" }, { run_id: "r1" }), first),
    stored(entries.message({ role: "assistant", content: "Buy milk, walk the dog." }, { run_id: "r2" }), second),
    stored(entries.event("run", { status: "ok", usage: { prompt_tokens: 120, completion_tokens: 8, total_tokens: 128 }, model: "openai:gpt-4o-mini" }, { run_id: "r2" }), second),
    stored(entries.event("loop.step", { step: 2, status: "ok" }), { turnId }),
  ];
}

describe("transcripts", () => {
  const tape: TapeEntry[] = [
    stored(entries.anchor("session/start", { owner: "human" }), { turnId: "t1" }),
    ...toolTurn("t1", "what do my notes say?"),
    stored(entries.anchor("phase-2", { summary: "notes read" }), { turnId: "t2" }),
    stored(entries.event("handoff", { name: "phase-2" }), { turnId: "t2" }),
    stored(entries.event("loop.start", { prompt: "and now?" }), { turnId: "t2" }),
    stored(entries.error({ kind: "provider", message: "model refused" }, { run_id: "r3" }), { turnId: "t2", modelCallId: "t2-m1" }),
    stored(entries.event("interrupted", { signal: "SIGINT" }), { turnId: "t2" }),
  ];

  it("groups entries into turns with their figures, pairing tool calls and results", () => {
    const transcript = buildTranscript(tape, { tape: "aa__bb", sessionId: "cli:local", workspace: "/w" });
    assert.equal(transcript.turnCount, 2);
    assert.equal(transcript.entries, tape.at(-1)!.id);
    const [first, second] = transcript.turns;
    assert.deepEqual(
      { number: first!.number, turnId: first!.turnId, modelCalls: first!.modelCalls, toolCalls: first!.toolCalls, usage: first!.usage, model: first!.model, durationMs: first!.durationMs },
      { number: 1, turnId: "t1", modelCalls: 2, toolCalls: 1, usage: { prompt_tokens: 220, completion_tokens: 18, total_tokens: 238 }, model: "openai:gpt-4o-mini", durationMs: 2250 },
    );
    assert.deepEqual(first!.items.map((item) => item.type), ["anchor", "system", "message", "tool_call", "tool_result", "message"]);
    const result = first!.items.find((item) => item.type === "tool_result");
    assert.deepEqual(result && { callId: result.callId, name: result.name, output: result.output }, { callId: "call_1", name: "fs_read", output: "buy milk\nwalk the dog" });
    assert.deepEqual(second!.items.map((item) => (item.type === "event" ? `event:${item.name}` : item.type)), ["anchor", "error", "event:interrupted"]);
    assert.equal(second!.usage, null);
  });

  it("keeps what follows the last anchor with --since-anchor, turn numbers unchanged", () => {
    const since = buildTranscript(tape, { tape: "aa__bb", sinceAnchor: true });
    assert.deepEqual(since.turns.map((turn) => turn.number), [2]);
    assert.equal(since.turnCount, 2);
    const named = buildTranscript(tape, { tape: "aa__bb", sinceAnchor: "session/start" });
    assert.deepEqual(named.turns.map((turn) => turn.number), [1, 2]);
    assert.throws(() => buildTranscript(tape, { tape: "aa__bb", sinceAnchor: "nope" }), bubError("not_found", /^Anchor "nope" was not found on tape aa__bb/));
  });

  it("reads tapes written before turn ids by their loop.start and command events, and turns written in two parts", () => {
    const legacy = [
      stored(entries.anchor("session/start")),
      stored(entries.event("loop.start", { prompt: "one" })),
      stored(entries.message({ role: "user", content: "one" })),
      stored(entries.event("command", { raw: "help", status: "ok", output: "commands: ..." })),
      stored(entries.event("loop.start", { prompt: "x" }), { turnId: "new-1" }),
      stored(entries.event("loop.start", { prompt: "y" }), { turnId: "new-2" }),
      stored(entries.event("late"), { turnId: "new-1" }),
    ];
    const transcript = buildTranscript(legacy, { tape: "aa__bb" });
    assert.equal(transcript.turnCount, 4);
    assert.deepEqual(
      transcript.turns.map((turn) => [turn.number, turn.continued]),
      [
        [null, false],
        [1, false],
        [2, false],
        [3, false],
        [4, false],
        [3, true],
      ],
    );
  });

  it("renders text for the terminal: turn headers with figures, the prompt without its context line, long output shortened", () => {
    const text = renderTranscriptText(buildTranscript(tape, { tape: "aa__bb", sessionId: "cli:local", workspace: "/w" }), { maxLines: 1 });
    const lines = text.split("\n");
    assert.equal(lines[0], "session cli:local · workspace /w");
    assert.equal(lines[1], `tape aa__bb · ${tape.at(-1)!.id} entries · 2 turns`);
    assert.ok(lines.includes("Turn 1 · 2026-11-25 10:00:00 UTC · 2.3 s · openai:gpt-4o-mini · 2 model calls · 1 tool call · 220 in / 18 out tokens"), text);
    assert.ok(lines.includes("  turn_id t1"));
    assert.ok(lines.includes("  user         what do my notes say?"), text);
    assert.ok(lines.includes('  tool call    fs_read {"path":"notes.txt"}'));
    assert.ok(lines.includes("  tool result  fs_read: buy milk"));
    assert.ok(lines.includes("               … (1 more line; --full shows everything)"), text);
    assert.ok(lines.includes("  assistant    Buy milk, walk the dog."));
    assert.ok(lines.some((line) => line.startsWith('  ── anchor phase-2 {"summary":"notes read"} ──')));
    assert.ok(lines.includes("  error        [provider] model refused"));
    assert.ok(lines.includes('  event        interrupted {"signal":"SIGINT"}'));
  });

  it("renders Markdown: a section per turn, tool calls and results in code blocks", () => {
    const markdown = renderTranscriptMarkdown(buildTranscript(tape, { tape: "aa__bb", sessionId: "cli:local", workspace: "/w" }), { exported: "2026-11-25T12:00:00.000000+00:00" });
    assert.ok(markdown.startsWith(`# Session \`cli:local\`\n\n- Workspace: \`/w\`\n- Tape: \`aa__bb\`\n- Entries: ${tape.at(-1)!.id} · Turns: 2\n- Exported: 2026-11-25 12:00:00 UTC\n`), markdown);
    assert.match(markdown, /\n## Turn 1\n\n2026-11-25 10:00:00 UTC · 2\.3 s · openai:gpt-4o-mini · 2 model calls · 1 tool call · 220 in \/ 18 out tokens\n\nTurn id `t1`\n/);
    assert.match(markdown, /\*\*User\*\*\n\nwhat do my notes say\?\n/);
    assert.match(markdown, /\*\*Tool call\*\* `fs_read` \(`call_1`\)\n\n```json\n\{\n {2}"path": "notes.txt"\n\}\n```/);
    assert.match(markdown, /\*\*Tool result\*\* `fs_read` \(`call_1`\)\n\n```\nbuy milk\nwalk the dog\n```/);
    assert.match(markdown, /\*\*Assistant\*\*\n\nBuy milk, walk the dog\./);
    assert.match(markdown, /\*\*Error\*\* \(provider\): model refused/);
  });

  it("fences code that holds backticks with a longer fence", () => {
    const withTicks = [stored(entries.toolCall([{ id: "c", type: "function", function: { name: "bash", arguments: "{}" } }])), stored(entries.toolResult(["```\ncode\n```"]))];
    const markdown = renderTranscriptMarkdown(buildTranscript(withTicks, { tape: "aa__bb" }));
    assert.match(markdown, /````\n```\ncode\n```\n````/);
  });
});
