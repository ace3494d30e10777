// The system prompt goes on the tape only when it differs from the last one the tape holds.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
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
