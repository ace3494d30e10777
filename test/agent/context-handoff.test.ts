import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fallbackSummary, handoffNotice } from "../../src/agent/context-handoff.ts";

describe("the context-budget handoff", () => {
  it("tells the person in one line, naming the share, the window and how to see the earlier turns", () => {
    const notice = handoffNotice({ tokens: 900, model: "openai:gpt-4o-mini", window: 128_000, share: 0.81, budgetShare: 0.8 }, "telegram:42");
    assert.equal(notice, "(Earlier turns were summarised to keep the context within 80% of the model's 128,000-token window; `bub tape show telegram:42` shows them in full.)");
    assert.ok(!notice.includes("\n"));
  });

  it("summarises without the model from the last requests and answer when the summary call fails", () => {
    const long = "x".repeat(400);
    const summary = fallbackSummary([
      { role: "user", content: "one" },
      { role: "assistant", content: "first answer" },
      { role: "user", content: "two" },
      { role: "user", content: "three" },
      { role: "user", content: long },
      { role: "assistant", content: "", tool_calls: [] },
      { role: "assistant", content: "last answer" },
    ]);
    assert.equal(summary, ["Earlier turns (summarised without the model):", "- asked: two", "- asked: three", `- asked: ${"x".repeat(300)}…`, "- last answer: last answer"].join("\n"));
  });
});
