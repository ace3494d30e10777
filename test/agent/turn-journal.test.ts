/**
 * The turn journal (src/agent/turn-journal.ts) over a real memory store and tape forks: the
 * steps a cut-off turn journaled are restored into the retry's fork (and reach the tape once,
 * at its merge), the journal is emptied after a merge, and a journal left by a turn that had
 * merged already is dropped instead of resumed.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TurnJournal } from "../../src/agent/turn-journal.ts";
import { withCorrelation } from "../../src/kernel/correlation.ts";
import type { TapeEntry, TapeStore } from "../../src/kernel/tape-contract.ts";
import { entries } from "../../src/tape/entry.ts";
import { forkTape } from "../../src/tape/fork.ts";
import { createMemoryTapeStore } from "../../src/tape/memory-store.ts";
import { createTape } from "../../src/tape/tape.ts";

const MAIN = "ws__session";
const JOURNAL = `${MAIN}__sidecar__turn`;

const sessionTape = (store: TapeStore) => createTape({ name: MAIN, store, archivePath: "/unused", sidecars: [] });
const toolCalls = (found: readonly TapeEntry[]) => found.filter((entry) => entry.kind === "tool_call").length;
const eventNames = (found: readonly TapeEntry[]) => found.filter((entry) => entry.kind === "event").map((entry) => String(entry.payload.name));

/** Opens a turn's fork and journal, as the agent does, and runs `body` in the turn's correlation scope. */
async function turn<T>(store: TapeStore, turnId: string, body: (parts: { fork: ReturnType<typeof forkTape>; journal: TurnJournal }) => Promise<T>): Promise<T> {
  return withCorrelation({ turnId }, async () => {
    const fork = forkTape(sessionTape(store), { mergeBack: true });
    const journal = new TurnJournal(fork, store, turnId);
    await fork.tape.ensureBootstrapAnchor();
    journal.begin();
    return body({ fork, journal });
  });
}

/** One model step that called a tool, as the agent loop records it. */
async function toolStep(fork: ReturnType<typeof forkTape>, step: number, prompt: string): Promise<void> {
  await fork.tape.appendEvent("loop.step.start", { step, prompt });
  await fork.tape.append(entries.toolCall([{ id: `call_${step}`, type: "function", function: { name: "bash", arguments: "{}" } }]));
  await fork.tape.append(entries.toolResult([`ran ${step}`]));
  await fork.tape.appendEvent("loop.step", { step, status: "continue" });
}

describe("the turn journal", () => {
  it("restores the steps a cut-off turn journaled, so its retry goes on after them and they reach the tape once", async () => {
    const store = createMemoryTapeStore();
    // The first run journals step 1, then dies before its merge: the fork's entries are lost.
    await turn(store, "turn_1", async ({ fork, journal }) => {
      await toolStep(fork, 1, "count the files");
      await journal.checkpoint();
      fork.discard();
    });
    assert.equal(toolCalls(await store.fetchAll({ tape: MAIN })), 0, "nothing of the cut-off turn is on the tape");
    assert.equal((await store.fetchAll({ tape: JOURNAL })).length, 4);

    await turn(store, "turn_2", async ({ fork, journal }) => {
      const point = await journal.restore();
      assert.deepEqual(point, { step: 1, prompt: "count the files", toolCalls: 1, fromTurnId: "turn_1" });
      assert.equal(toolCalls(await fork.tape.search({ tape: MAIN })), 1, "the retry's fork holds the completed step");
      // A second step is journaled after the restored one, under the cut-off turn's generation.
      await toolStep(fork, 2, "count the files");
      await journal.checkpoint();
      const journaled = await store.fetchAll({ tape: JOURNAL });
      assert.equal(toolCalls(journaled), 2, "the restored step is not journaled twice");
      assert.deepEqual(new Set(journaled.map((entry) => entry.meta.journal_turn)), new Set(["turn_1"]));
      await fork.merge();
      await journal.clear();
    });
    const tape = await store.fetchAll({ tape: MAIN });
    assert.equal(toolCalls(tape), 2, "each tool call once");
    assert.deepEqual(eventNames(tape).filter((name) => name.startsWith("loop.step")), ["loop.step.start", "loop.step", "loop.step.start", "loop.step"]);
    assert.deepEqual(await store.fetchAll({ tape: JOURNAL }), [], "cleared after the merge");
  });

  it("is emptied at the merge of a turn that completed, and a retry then finds nothing to resume", async () => {
    const store = createMemoryTapeStore();
    await turn(store, "turn_1", async ({ fork, journal }) => {
      await toolStep(fork, 1, "hello");
      await journal.checkpoint();
      assert.equal((await store.fetchAll({ tape: JOURNAL })).length, 4);
      await fork.merge();
      await journal.clear();
    });
    assert.deepEqual(await store.fetchAll({ tape: JOURNAL }), []);
    const point = await turn(store, "turn_2", async ({ journal }) => journal.restore());
    assert.equal(point, null);
  });

  it("drops, instead of resuming, a journal whose turn the tape already holds (killed between merge and clear)", async () => {
    const store = createMemoryTapeStore();
    await turn(store, "turn_1", async ({ fork, journal }) => {
      await toolStep(fork, 1, "hello");
      await journal.checkpoint();
      await fork.merge(); // ... and the process dies before journal.clear()
    });
    assert.equal((await store.fetchAll({ tape: JOURNAL })).length, 4);
    await turn(store, "turn_2", async ({ fork, journal }) => {
      assert.equal(await journal.restore(), null);
      assert.equal(toolCalls(await fork.tape.search({ tape: MAIN })), 1, "nothing copied into the retry's fork");
      await fork.merge();
      await journal.clear();
    });
    assert.equal(toolCalls(await store.fetchAll({ tape: MAIN })), 1, "the tool call is on the tape once");
    assert.deepEqual(await store.fetchAll({ tape: JOURNAL }), [], "the stale journal is gone");
  });

  it("resumes nothing from a journal without a completed step", async () => {
    const store = createMemoryTapeStore();
    await turn(store, "turn_1", async ({ fork, journal }) => {
      await fork.tape.appendEvent("loop.step.start", { step: 1, prompt: "hello" });
      await journal.checkpoint();
      fork.discard();
    });
    assert.equal(await turn(store, "turn_2", async ({ journal }) => journal.restore()), null);
  });
});
