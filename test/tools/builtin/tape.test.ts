// The tape tools, spill.read and the session commands, with their exact output strings.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { entries } from "../../../src/tape/entry.ts";
import { createSpillSidecar } from "../../../src/tape/spill.ts";
import { sessionTools } from "../../../src/tools/builtin/session.ts";
import { createShellManager } from "../../../src/tools/builtin/shell-manager.ts";
import { spillTools, tapeTools } from "../../../src/tools/builtin/tape.ts";
import { tempDir } from "../../support/temp.ts";
import { call, errorOf, memoryTape, toolContext } from "../support/tool-context.ts";

const tools = [...tapeTools(), ...spillTools(), ...sessionTools(createShellManager())];

describe("tape tools", () => {
  it("tape.info summarizes the tape with Python-style None for unknowns", async () => {
    const tape = memoryTape();
    assert.equal(
      await call(tools, "tape.info", {}, toolContext({}, { tape })),
      "name: ws__session\nentries: 0\nanchors: 0\nlast_anchor: None\nentries_since_last_anchor: 0\nlast_token_usage: None\nlast_token_cache_hit_rate: unknown (no cached-token count reported yet)\ncontext_used: unknown (no model call on this tape yet)",
    );
    await tape.handoff("phase-1", { summary: "x" });
    await tape.appendEvent("run", { status: "ok", model: "openai:gpt-4o-mini", usage: { total_tokens: 120, prompt_tokens: 100, completion_tokens: 20, prompt_tokens_details: { cached_tokens: 25 } } });
    assert.equal(
      await call(tools, "tape.info", {}, toolContext({}, { tape })),
      "name: ws__session\nentries: 3\nanchors: 1\nlast_anchor: phase-1\nentries_since_last_anchor: 2\nlast_token_usage: 120\nlast_token_cache_hit_rate: 25.00%\ncontext_used: 120 of 128,000 tokens (0.1%; hand-off at 80%)",
    );
  });

  it("tape.handoff adds an anchor with the summary; tape.anchors lists anchors", async () => {
    const tape = memoryTape();
    assert.equal(await call(tools, "tape.anchors", {}, toolContext({}, { tape })), "(no anchors)");
    assert.equal(await call(tools, "tape.handoff", {}, toolContext({}, { tape })), "anchor added: handoff");
    assert.equal(await call(tools, "tape.handoff", { name: "phase-2", summary: "done" }, toolContext({}, { tape })), "anchor added: phase-2");
    assert.deepEqual((await tape.anchors()).at(-1), { name: "phase-2", state: { summary: "done" } });
    assert.equal(await call(tools, "tape.anchors", {}, toolContext({}, { tape })), "- handoff\n- phase-2");
  });

  it("tape.search returns matching entries as JSON lines, leaving out earlier search output", async () => {
    const tape = memoryTape();
    await tape.append(entries.message({ role: "user", content: "the error is here" }));
    await tape.append(entries.message({ role: "assistant", content: "no match" }));
    await tape.append(entries.toolResult(["[tape.search]: 1 matches (0 filtered) error"]));
    const output = String(await call(tools, "tape.search", { query: "error" }, toolContext({}, { tape })));
    const [head, ...lines] = output.split("\n");
    assert.equal(head, "[tape.search]: 1 matches (1 filtered)");
    assert.equal(lines.length, 1);
    const hit = JSON.parse(lines[0]!) as { date: string; content: unknown };
    assert.deepEqual(hit.content, { role: "user", content: "the error is here" });
    assert.match(lines[0]!, /^\{"date": "/, "Python json.dumps separators");
  });

  it("tape.search accepts a single date bound", async () => {
    const tape = memoryTape();
    await tape.append(entries.message({ role: "user", content: "dated error" }));
    const output = String(await call(tools, "tape.search", { query: "error", start: "2000-01-01" }, toolContext({}, { tape })));
    assert.equal(output.split("\n")[0], "[tape.search]: 1 matches (0 filtered)");
  });

  it("tape.reset empties the tape and can archive it first", async () => {
    const archive = await tempDir("bub-archive-");
    try {
      const tape = memoryTape({ archivePath: archive.path });
      await tape.appendEvent("x", {});
      assert.equal(await call(tools, "tape.reset", {}, toolContext({}, { tape })), "ok");
      assert.equal((await tape.info()).lastAnchor, "session/start");
      assert.match(String(await call(tools, "tape.reset", { archive: true }, toolContext({}, { tape }))), /^Archived: .*ws__session\.jsonl\.\d{8}T\d{6}Z\.bak$/);
    } finally {
      await archive.cleanup();
    }
  });
});

describe("spill.read", () => {
  it("pages through a spilled result and reports bad arguments and handles", async () => {
    const spill = createSpillSidecar({ threshold: 1 });
    const tape = memoryTape({ sidecars: [spill] });
    const notice = await spill.spillToolResult(tape, "y".repeat(40), { tool: "bash", runId: "r" });
    const handle = /handle: ([0-9a-f]{32})/.exec(notice)![1]!;
    const context = toolContext({}, { tape });
    assert.equal(await call(tools, "spill.read", { handle }, context), "[spilled tool result: 40 bytes, 1 chunks]\nchunks: 0-0\nnext_cursor: 1\ncomplete: true\ncontent:\n" + "y".repeat(40));
    assert.equal(await call(tools, "spill.read", { handle, cursor: -1 }, context), "`cursor` must be >= 0.");
    assert.equal(await call(tools, "spill.read", { handle, count: 0 }, context), "`count` must be >= 1.");
    assert.equal(await call(tools, "spill.read", { handle: "abc" }, context), "[no spilled tool result for handle 'abc']");
    assert.equal(await call(tools, "spill.read", { handle }, toolContext({}, { tape: memoryTape() })), "spill sidecar unavailable in this context.");
  });
});

describe("session commands", () => {
  it("help prints the command list and is hidden from the model", async () => {
    const help = String(await call(tools, "help", {}, toolContext({}, { tape: memoryTape() })));
    assert.ok(help.startsWith("Commands use ',' at line start.\nKnown internal commands:\n  ,help\n"));
    assert.ok(help.includes("  ,bash.output shell_id=bash-12345678\n"));
    assert.ok(help.endsWith("Any unknown command after ',' is executed as shell via bash."));
    for (const name of ["help", "quit", "model", "reasoning_effort"]) assert.equal(tools.find((tool) => tool.name === name)!.agentUse, false);
  });

  it("model switches the session model and records model_switch", async () => {
    const tape = memoryTape();
    const state: Record<string, unknown> = {};
    assert.equal(await call(tools, "model", { model_id: "openai:gpt-4o" }, toolContext(state, { tape })), "Session model set to openai:gpt-4o (applies from the next turn).");
    assert.equal(state.model, "openai:gpt-4o");
    const [event] = await tape.search(tape.query().kinds("event"));
    assert.deepEqual(event!.payload, { name: "model_switch", data: { model: "openai:gpt-4o" } });
  });

  it("reasoning_effort trims its value and refuses an empty one", async () => {
    const tape = memoryTape();
    const state: Record<string, unknown> = {};
    assert.equal(await call(tools, "reasoning_effort", { reasoning_effort: " high " }, toolContext(state, { tape })), "Session reasoning effort set to high (applies from the next turn).");
    assert.equal(state.reasoning_effort, "high");
    const [event] = await tape.search(tape.query().kinds("event"));
    assert.deepEqual(event!.payload, { name: "reasoning_effort_switch", data: { reasoning_effort: "high" } });
    assert.equal(await errorOf(call(tools, "reasoning_effort", { reasoning_effort: "  " }, toolContext({}, { tape }))), "reasoning_effort must not be empty");
  });
});
