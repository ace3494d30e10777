/**
 * What plugins see of the tape (issue 25): a plugin written against the public API only
 * (`bub-ts`, here src/index.ts) gets its turn's session tape, typed as `TapeHandle`, in a
 * context tool's `tape` and as `state._runtime_tape` in the tool hooks. It appends to the
 * tape and searches it without a cast: this file does not type-check if either is untyped.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { definePlugin, defineTool, registerTool, z, type BubFramework, type TapeEntry, type TapeHandle } from "../../src/index.ts";
import { createMemoryTapeStore, createTestBub } from "../../src/testing.ts";
import { reply } from "../support/fake-openai.ts";
import { useFakeOpenAI } from "../support/fake-openai-suite.ts";
import { tempDir } from "../support/temp.ts";

/** The texts of the `note` events on `tape`, oldest first. */
async function notesOn(tape: TapeHandle): Promise<string[]> {
  const events = await tape.search({ tape: tape.name, kinds: ["event"] });
  return events.filter((entry) => entry.payload.name === "note").map((entry) => String((entry.payload.data as { text?: unknown }).text));
}

/** The plugin under test: a tool that keeps notes on the session tape, and a hook that audits tool calls there. */
function notesPlugin(seen: { hookTapes: string[] }) {
  const add = defineTool({
    name: "notes.add",
    description: "Keep a note on the session tape; answers with every note so far",
    parameters: z.object({ text: z.string() }),
    context: true,
    async run({ text }, { tape }) {
      const written = await tape.appendEvent("note", { text });
      const found = await tape.search({ tape: tape.name, text, kinds: ["event"] });
      if (!found.some((entry) => entry.id === written.id)) throw new Error(`the note '${text}' is not found on ${tape.name}`);
      return (await notesOn(tape)).join(", ");
    },
  });
  return (framework: BubFramework) => {
    registerTool(framework, add);
    return definePlugin({
      name: "notes",
      async afterToolCall({ call, state, context }) {
        const tape = context.tape;
        if (!tape) return;
        // The reference's compatibility key reads the same tape.
        if (state._runtime_tape !== tape) throw new Error("state._runtime_tape is not the context's tape");
        seen.hookTapes.push(tape.name);
        await tape.appendEvent("notes.audit", { tool: call.tool }, { context: false });
      },
    });
  };
}

describe("the tape a plugin sees", () => {
  const server = useFakeOpenAI();
  let home: Awaited<ReturnType<typeof tempDir>>;
  before(async () => void (home = await tempDir()));
  after(() => home.cleanup());

  it("a plugin's tool appends to and searches its turn's tape; its tool hook writes there too", async () => {
    const store = createMemoryTapeStore();
    const seen = { hookTapes: [] as string[] };
    const bub = await createTestBub({
      builtin: true,
      home: home.path,
      workspace: home.path,
      env: { BUB_MODEL: "fake:any", BUB_API_BASE: server.url, BUB_API_KEY: "sk-test" },
      plugins: [notesPlugin(seen), definePlugin({ name: "memory-tapes", provideTapeStore: () => store })],
    });
    const turn = (content: string) => bub.running(() => bub.processInbound({ channel: "test", chat_id: "1", session_id: "test:notes", content }));

    server.script(reply.toolCalls([{ id: "call_1", name: "notes_add", arguments: '{"text":"milk"}' }]), reply.text("Noted milk."));
    assert.equal((await turn("remember milk")).modelOutput, "Noted milk.");
    server.script(reply.toolCalls([{ id: "call_2", name: "notes_add", arguments: '{"text":"eggs"}' }]), reply.text("Noted eggs."));
    assert.equal((await turn("and eggs")).modelOutput, "Noted eggs.");

    const [name, ...others] = await store.listTapes();
    assert.deepEqual(others, [], "one session tape");
    const entries: TapeEntry[] = await store.fetchAll({ tape: name! });
    // The second call saw the note of the first turn (merged) and its own (in the turn's fork).
    const results = entries.filter((entry) => entry.kind === "tool_result").map((entry) => entry.payload.results);
    assert.deepEqual(results, [["milk"], ["milk, eggs"]]);
    const notes = entries.filter((entry) => entry.kind === "event" && entry.payload.name === "note");
    assert.deepEqual(notes.map((entry) => [entry.payload.data, entry.meta.tool_call_id]), [[{ text: "milk" }, "call_1"], [{ text: "eggs" }, "call_2"]]);
    // The hook got the same tape, typed, and what it wrote stays out of the model's context.
    assert.deepEqual(seen.hookTapes, [name, name]);
    const audits = entries.filter((entry) => entry.kind === "event" && entry.payload.name === "notes.audit");
    assert.deepEqual(audits.map((entry) => [entry.payload.data, entry.meta.context]), [[{ tool: "notes_add" }, false], [{ tool: "notes_add" }, false]]);
  });
});
