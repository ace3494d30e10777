// A tape as an ATIF trajectory and as CloudEvents, checked against the published schema.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { withCorrelation } from "../../src/kernel/correlation.ts";
import type { NewTapeEntry, TapeEntry } from "../../src/kernel/tape-contract.ts";
import { entries, prepareEntry } from "../../src/tape/entry.ts";
import { tapeToAtif } from "../../src/tape/atif.ts";
import { trajectoryEvents } from "../../src/tape/cloudevents.ts";
import { atifProblems, checkCloudEvent } from "../support/atif-schema.ts";

let nextId = 0;
let clock = Date.parse("2026-11-25T10:00:00Z");

function stored(entry: NewTapeEntry, ids: { turnId?: string; modelCallId?: string } = {}): TapeEntry {
  const prepared = withCorrelation(ids, () => prepareEntry(entry));
  clock += 250;
  return { id: ++nextId, ...prepared, date: new Date(clock).toISOString().replace("Z", "000+00:00") };
}

const SYSTEM = "You are a test agent.";

/** A turn as the agent writes it: with `tool`, a model call asking for fs_read, then the answer. */
function turn(turnId: string, question: string, answer: string, options: { tool?: boolean; cost?: number } = {}): TapeEntry[] {
  const first = { turnId, modelCallId: `${turnId}-m1` };
  const second = { turnId, modelCallId: `${turnId}-m2` };
  const run = (usage: Record<string, unknown>) => ({ status: "ok", usage, provider: "openai", model: "openai:gpt-4o-mini", ...(options.cost === undefined ? {} : { cost: { usd: options.cost, source: "catalog" } }) });
  const head = [
    stored(entries.event("loop.start", { model: "openai:gpt-4o-mini", prompt: question }), { turnId }),
    stored(entries.system(SYSTEM, { run_id: "r1" }), first),
    stored(entries.message({ role: "user", content: `sender_id=human|channel=$cli|chat_id=local\n---Date: 2026-11-25T10:00:00+00:00---\n${question}` }, { run_id: "r1" }), first),
  ];
  if (!options.tool) {
    return [...head, stored(entries.message({ role: "assistant", content: answer }, { run_id: "r1" }), first), stored(entries.event("run", run({ prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 }), { run_id: "r1" }), first)];
  }
  const calls = { run_id: "r1", tool_call_ids: ["call_1"] };
  return [
    ...head,
    stored(entries.toolCall([{ id: "call_1", type: "function", function: { name: "fs_read", arguments: '{"path":"notes.txt"}' } }], calls, "Let me look."), first),
    stored(entries.toolResult(["buy milk"], calls), first),
    stored(entries.event("run", run({ prompt_tokens: 100, completion_tokens: 10, total_tokens: 110, prompt_tokens_details: { cached_tokens: 40 } }), { run_id: "r1" }), first),
    stored(entries.system(SYSTEM, { run_id: "r2" }), second),
    stored(entries.message({ role: "user", content: "Continue the task until all targets are completed." }, { run_id: "r2" }), second),
    stored(entries.message({ role: "assistant", content: answer }, { run_id: "r2" }), second),
    stored(entries.event("run", run({ prompt_tokens: 120, completion_tokens: 8, total_tokens: 128 }), { run_id: "r2" }), second),
  ];
}

const tape = [
  stored(entries.anchor("session/start", { owner: "human" }), { turnId: "t1" }),
  ...turn("t1", "what do my notes say?", "The notes say: buy milk.", { tool: true, cost: 0.002 }),
  ...turn("t2", "thanks", "You're welcome."),
];
const options = { tape: "abc__def", sessionId: "cli:local", workspace: "/w", agentVersion: "0.1.0" };

describe("tapeToAtif", () => {
  const trajectory = tapeToAtif(tape, options);

  it("is a valid ATIF v1.4 trajectory", () => {
    assert.deepEqual(atifProblems(trajectory), []);
    assert.equal(trajectory.schema_version, "ATIF-v1.4");
    assert.equal(trajectory.session_id, "cli:local");
    assert.deepEqual(trajectory.agent, { name: "bub", version: "0.1.0", model_name: "openai:gpt-4o-mini" });
  });

  it("has the anchor, the system prompt once, the user's words without the context line, one agent step per model call", () => {
    assert.deepEqual(
      trajectory.steps.map((step) => [step.source, step.message]),
      [
        ["system", "anchor: session/start"],
        ["system", SYSTEM],
        ["user", "what do my notes say?"],
        ["agent", "Let me look."],
        ["user", "Continue the task until all targets are completed."],
        ["agent", "The notes say: buy milk."],
        ["user", "thanks"],
        ["agent", "You're welcome."],
      ],
    );
    assert.equal(trajectory.steps[2]!.extra?.context, "sender_id=human|channel=$cli|chat_id=local");
  });

  it("pairs the tool call with its result and carries tokens, cached tokens and the recorded price", () => {
    const step = trajectory.steps[3]!;
    assert.deepEqual(step.tool_calls, [{ tool_call_id: "call_1", function_name: "fs_read", arguments: { path: "notes.txt" } }]);
    assert.deepEqual(step.observation, { results: [{ source_call_id: "call_1", content: "buy milk" }] });
    assert.deepEqual(step.metrics, { prompt_tokens: 100, completion_tokens: 10, cached_tokens: 40, cost_usd: 0.002 });
    assert.deepEqual(trajectory.steps[7]!.metrics, { prompt_tokens: 50, completion_tokens: 5 });
    assert.deepEqual(trajectory.final_metrics, { total_steps: 8, total_prompt_tokens: 270, total_completion_tokens: 23, total_cached_tokens: 40, total_cost_usd: 0.004 });
  });

  it("the schema refuses what ATIF does not allow (the check can fail)", () => {
    const broken = structuredClone(trajectory) as unknown as { steps: Record<string, unknown>[] };
    broken.steps[2]!.tool_calls = [];
    broken.steps[4]!.step_id = 9;
    (broken.steps[3]!.observation as { results: Record<string, unknown>[] }).results[0]!.source_call_id = "call_x";
    const problems = atifProblems(broken).join("\n");
    assert.match(problems, /\/steps\/2\/tool_calls boolean schema is false/);
    assert.match(problems, /\/steps\/3 observation names call_x/);
    assert.match(problems, /\/steps\/4\/step_id is 9, expected 5/);
  });

  it("arguments that are no JSON object become {} and are kept in the step's extra", () => {
    const bad = [stored(entries.toolCall([{ id: "c", type: "function", function: { name: "bash", arguments: "{oops" } }], { run_id: "r9" }), { turnId: "t9", modelCallId: "m9" })];
    const result = tapeToAtif(bad, options);
    assert.deepEqual(atifProblems(result), []);
    assert.deepEqual(result.steps[0]!.tool_calls?.[0]?.arguments, {});
    assert.deepEqual(result.steps[0]!.extra?.unparsed_arguments, ["{oops"]);
  });
});

describe("trajectoryEvents", () => {
  it("one valid CloudEvent per step, the step as data", () => {
    const trajectory = tapeToAtif(tape, options);
    const events = trajectoryEvents(trajectory, "abc__def");
    assert.equal(events.length, trajectory.steps.length);
    for (const [index, event] of events.entries()) {
      const checked = checkCloudEvent({ ...event });
      assert.equal(checked.specversion, "1.0");
      assert.equal(event.type, "bub.tape.step");
      assert.equal(event.source, "/bub/tapes/abc__def");
      assert.equal(event.subject, "cli:local");
      assert.deepEqual(event.data, trajectory.steps[index]);
    }
    assert.equal(new Set(events.map((event) => event.id)).size, events.length);
  });
});
