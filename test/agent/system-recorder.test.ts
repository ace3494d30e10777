// The system prompt goes on the tape only when it differs from the last one the tape holds; its text is joined from its blocks once per change.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { joinSystemBlocks } from "../../src/agent/prompt-text.ts";
import { SystemPromptRecorder } from "../../src/agent/system-recorder.ts";
import type { StepRecord } from "../../src/llm/step-record.ts";
import { createMemoryTapeStore } from "../../src/tape/memory-store.ts";
import { createTapes } from "../../src/tape/tapes.ts";

const step = (systemPrompt: string): StepRecord => ({ runId: "r", systemPrompt, newMessages: [{ role: "user", content: "hi" }], responseText: "ok" }) as unknown as StepRecord;

describe("SystemPromptRecorder", () => {
  it("compares with the newest system prompt on the tape when it starts, not the oldest", async () => {
    const store = createMemoryTapeStore();
    const tape = createTapes({ store, archivePath: "/tmp/unused" }).tape("t__s");
    const first = new SystemPromptRecorder().recorder(tape);
    await first(step("prompt one"));
    await first(step("prompt two"));
    // A new process (a new recorder) with the same prompt as the tape's newest: not written again.
    await new SystemPromptRecorder().recorder(tape)(step("prompt two"));
    const systems = (await store.fetchAll({ tape: "t__s", kinds: ["system"] })).map((entry) => entry.payload.content);
    assert.deepEqual(systems, ["prompt one", "prompt two"]);
  });
});

describe("joinSystemBlocks", () => {
  it("joins the non-empty blocks with a blank line, and sees any changed block", () => {
    const hook = "You are bub.";
    const tools = "<tools>a, b</tools>";
    assert.equal(joinSystemBlocks([hook, tools, ""]), "You are bub.\n\n<tools>a, b</tools>");
    assert.equal(joinSystemBlocks([hook, tools, ""]), "You are bub.\n\n<tools>a, b</tools>", "the same blocks again");
    assert.equal(joinSystemBlocks([hook, tools, "<skills/>"]), "You are bub.\n\n<tools>a, b</tools>\n\n<skills/>", "a block that changed");
    assert.equal(joinSystemBlocks([hook, tools]), "You are bub.\n\n<tools>a, b</tools>", "a block fewer");
    assert.equal(joinSystemBlocks([`${hook} `.trim(), tools]), "You are bub.\n\n<tools>a, b</tools>", "equal text made anew");
    assert.equal(joinSystemBlocks([]), "");
  });
});
