// Building model context from a tape: the anchor rule, context-excluded entries and the builtin selector.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LAST_ANCHOR, isTapeContext, type TapeContext, type TapeEntry } from "../../src/kernel/tape-contract.ts";
import { contextQuery, createDefaultTapeContext, plainMessages, selectMessages } from "../../src/tape/context.ts";
import { entries } from "../../src/tape/entry.ts";
import { createMemoryTapeStore } from "../../src/tape/memory-store.ts";
import { createTape } from "../../src/tape/tape.ts";
import { bubError } from "./support/helpers.ts";

/** A key a custom selector of this file reads from the state. */
declare module "../../src/kernel/types.ts" {
  interface TurnState {
    mood?: string;
  }
}

type LooseEntry = { kind: string; payload: Record<string, unknown>; meta?: Record<string, unknown>; date?: string };

function stored(list: LooseEntry[]): TapeEntry[] {
  return list.map((entry, index) => ({ id: index + 1, kind: entry.kind, payload: entry.payload, meta: entry.meta ?? {}, date: entry.date ?? "" }));
}

describe("the builtin selector", () => {
  it("turns anchors, messages, tool calls and results into chat messages", () => {
    const calls = [
      { id: "call-1", type: "function", function: { name: "fs_read", arguments: '{"path":"a"}' } },
      { id: "", type: "function", function: { name: "" } },
    ];
    const messages = selectMessages(
      stored([
        entries.anchor("session/start", { owner: "human", note: "ünïcode" }),
        entries.anchor("no-state"),
        entries.system("ignored system prompt"),
        entries.message({ role: "user", content: "read a", name: "alice" }),
        entries.toolCall(calls),
        entries.toolResult(["text result", { lines: 2, text: "grüß" }, "unpaired"]),
        entries.event("run", { status: "ok" }),
        entries.error({ kind: "tool", message: "ignored" }),
        { kind: "custom", payload: { role: "user", content: "ignored too" } },
        entries.message({ role: "assistant", content: "done" }),
      ]),
      createDefaultTapeContext(),
    );
    assert.deepEqual(messages, [
      { role: "assistant", content: '[Anchor created: session/start]: {"owner": "human", "note": "ünïcode"}' },
      { role: "assistant", content: "[Anchor created: no-state]: null" },
      { role: "user", content: "read a", name: "alice" },
      { role: "assistant", content: "", tool_calls: calls },
      { role: "tool", content: "text result", tool_call_id: "call-1", name: "fs_read" },
      { role: "tool", content: '{"lines": 2, "text": "grüß"}' },
      { role: "tool", content: "unpaired" },
      { role: "assistant", content: "done" },
    ]);
  });

  it("skips a tool call without calls and does not pair later results with stale calls", () => {
    const messages = selectMessages(
      stored([
        entries.toolCall([{ id: "a", function: { name: "x" } }]),
        entries.toolResult(["first"]),
        entries.toolCall(["not a call"]),
        entries.toolResult(["second"]),
        { kind: "tool_result", payload: { results: "not a list" } },
      ]),
    );
    assert.deepEqual(messages, [
      { role: "assistant", content: "", tool_calls: [{ id: "a", function: { name: "x" } }] },
      { role: "tool", content: "first", tool_call_id: "a", name: "x" },
      { role: "tool", content: "second" },
    ]);
  });

  it("gives the text said beside tool calls back on the assistant message that makes them", () => {
    const call = { id: "a", type: "function", function: { name: "bash", arguments: "{}" } };
    const messages = selectMessages(stored([{ kind: "tool_call", payload: { calls: [call], content: "Let me look." } }, entries.toolResult(["ok"])]));
    assert.deepEqual(messages, [
      { role: "assistant", content: "Let me look.", tool_calls: [call] },
      { role: "tool", content: "ok", tool_call_id: "a", name: "bash" },
    ]);
  });

  it("without a selector, the context is the message payloads", () => {
    assert.deepEqual(plainMessages(stored([entries.anchor("a"), entries.message({ role: "user", content: "m" })])), [{ role: "user", content: "m" }]);
  });

  it("makes a default context that the kernel recognises", () => {
    const context = createDefaultTapeContext({ session_id: "s" });
    assert.equal(context.anchor, LAST_ANCHOR);
    assert.equal(context.select, selectMessages);
    assert.deepEqual(context.state, { session_id: "s" });
    assert.ok(isTapeContext(context));
    assert.deepEqual(contextQuery("t", { anchor: null }), { tape: "t" });
    assert.deepEqual(contextQuery("t", { anchor: "x" }), { tape: "t", afterAnchor: "x" });
  });
});

describe("Tape.readMessages", () => {
  async function tapeWith(context: TapeContext) {
    const store = createMemoryTapeStore();
    const tape = createTape({ name: "w__s", store, context, archivePath: "/unused" });
    await store.appendBatch(tape.name, [
      entries.message({ role: "user", content: "before" }),
      entries.anchor("first"),
      entries.message({ role: "user", content: "middle" }),
      entries.anchor("second"),
      entries.message({ role: "user", content: "after" }),
      entries.message({ role: "user", content: "hidden" }, { context: false }),
    ]);
    return tape;
  }

  it("reads after the last anchor by default", async () => {
    const tape = await tapeWith(createDefaultTapeContext());
    assert.deepEqual(await tape.readMessages(), [{ role: "user", content: "after" }]);
  });

  it("reads everything with a null anchor and after a named anchor", async () => {
    const everything = await tapeWith({ anchor: null, state: {} });
    assert.deepEqual((await everything.readMessages()).map((message) => message.content), ["before", "middle", "after"]);
    const named = (await tapeWith(createDefaultTapeContext())).withContext({ anchor: "first", select: selectMessages, state: {} });
    assert.deepEqual((await named.readMessages()).map((message) => message.content), ["middle", "[Anchor created: second]: null", "after"]);
  });

  it("never hands context-excluded entries to a custom selector", async () => {
    const seen: string[] = [];
    const tape = await tapeWith({
      anchor: null,
      state: { mood: "curious" },
      select: (found, context) => {
        seen.push(...found.map((entry) => String(entry.payload.content ?? entry.payload.name)));
        return [{ role: "system", content: String(context.state.mood) }];
      },
    });
    assert.deepEqual(await tape.readMessages(), [{ role: "system", content: "curious" }]);
    assert.deepEqual(seen, ["before", "first", "middle", "second", "after"]);
  });

  it("supports async selectors", async () => {
    const tape = await tapeWith({ anchor: LAST_ANCHOR, state: {}, select: async (found) => found.map(() => ({ role: "user", content: "x" })) });
    assert.deepEqual(await tape.readMessages(), [{ role: "user", content: "x" }]);
  });

  it("fails with not_found when the context's anchor is missing", async () => {
    const tape = await tapeWith({ anchor: "missing", state: {} });
    await assert.rejects(tape.readMessages(), bubError("not_found", "Anchor 'missing' was not found."));
  });
});
