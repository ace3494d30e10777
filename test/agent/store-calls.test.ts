// How many calls of the tape store one turn makes (issues 33 and 35): each is a `stat` and a
// read or write of a file in the file store, a statement in PostgreSQL. A turn reads its
// session tape once (switches, anchor check, system prompt hash and context answered from that
// read) and writes it once (the merge of its fork).
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createBub } from "../../src/builtin/create.ts";
import type { NewTapeEntry, TapeQuery, TapeStore } from "../../src/kernel/tape-contract.ts";
import { entries } from "../../src/tape/entry.ts";
import { createFileTapeStore } from "../../src/tape/file-store.ts";
import { createMemoryTapeStore } from "../../src/tape/memory-store.ts";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/temp.ts";

/** One call of the store: the method and the tape it was about. */
interface StoreCall {
  readonly method: "fetchAll" | "append" | "appendBatch" | "reset";
  readonly tape: string;
  readonly query?: TapeQuery;
}

/** `store` with each read, write and reset recorded in `calls` (the name index is not counted). */
function counting(store: TapeStore): { store: TapeStore; calls: StoreCall[] } {
  const calls: StoreCall[] = [];
  return {
    calls,
    store: {
      listTapes: () => store.listTapes(),
      fetchAll: (query: TapeQuery) => (calls.push({ method: "fetchAll", tape: query.tape, query }), store.fetchAll(query)),
      append: (tape: string, entry: NewTapeEntry) => (calls.push({ method: "append", tape }), store.append(tape, entry)),
      appendBatch: (tape: string, batch: readonly NewTapeEntry[]) => (calls.push({ method: "appendBatch", tape }), store.appendBatch ? store.appendBatch(tape, batch) : Promise.all(batch.map((entry) => store.append(tape, entry)))),
      reset: (tape: string) => (calls.push({ method: "reset", tape }), store.reset(tape)),
      recordTapeName: store.recordTapeName?.bind(store),
      tapeNames: store.tapeNames?.bind(store),
      close: store.close?.bind(store),
    },
  };
}

describe("tape store calls per turn", () => {
  let server: FakeOpenAI;
  before(async () => {
    server = await startFakeOpenAI();
  });
  after(() => server.close());

  /** A bub over `store`; `send` runs one turn of session `s` and answers the calls it made. */
  async function bubOver(dir: string, store: TapeStore) {
    const home = join(dir, ".bub");
    const env = { BUB_MODEL: "fake:model", BUB_FAKE_API_BASE: server.url, BUB_FAKE_API_KEY: "sk-test", BUB_HOME: home };
    const framework = await createBub({ workspace: dir, home, env });
    await framework.registerPlugin({ name: "counted-store", provideTapeStore: () => store });
    return framework;
  }

  async function turn(framework: Awaited<ReturnType<typeof bubOver>>, calls: StoreCall[], content: string): Promise<StoreCall[]> {
    const before = calls.length;
    server.script(reply.text(`answer to ${content}`));
    const result = await framework.running(() => framework.processInbound({ session_id: "s", channel: "cli", chat_id: "c", content }));
    assert.equal(result.modelOutput, `answer to ${content}`);
    return calls.slice(before);
  }

  const describeCalls = (calls: readonly StoreCall[]) => calls.map((call) => `${call.method}${call.query ? JSON.stringify({ ...call.query, tape: undefined }) : ""}`).join(", ");

  it("a turn of a session reads its tape once and writes it once, in the same process and after a restart", async () => {
    const dir = await tempDir();
    try {
      const memory = createMemoryTapeStore();
      const first = counting(memory);
      const bub = await bubOver(dir.path, first.store);
      // A new session: its one read, the merge's check that no other turn started it meanwhile, the merge.
      const opening = await turn(bub, first.calls, "one");
      assert.deepEqual(opening.map((call) => call.method), ["fetchAll", "fetchAll", "appendBatch"], describeCalls(opening));
      for (const content of ["two", "three"]) {
        const made = await turn(bub, first.calls, content);
        assert.ok(made.length <= 2, `a later turn made ${made.length} store calls: ${describeCalls(made)}`);
        assert.deepEqual(made.map((call) => call.method).sort(), ["appendBatch", "fetchAll"], describeCalls(made));
      }
      // A new process over the same store knows nothing of the tape yet: still one read.
      const second = counting(memory);
      const restarted = await bubOver(dir.path, second.store);
      const made = await turn(restarted, second.calls, "four");
      assert.deepEqual(made.map((call) => call.method).sort(), ["appendBatch", "fetchAll"], describeCalls(made));
      // The model saw the whole conversation, as before.
      const messages = server.requests.at(-1)?.body.messages.filter((message) => message.role !== "system").map((message) => message.content);
      assert.ok(messages?.includes("answer to one") && messages.includes("answer to three") && messages.at(-1) === "four", JSON.stringify(messages));
    } finally {
      await dir.cleanup();
    }
  });

  it("another process's appends and a reset between two turns are seen (file store)", async () => {
    const dir = await tempDir();
    try {
      const directory = join(dir.path, "tapes");
      const mine = counting(createFileTapeStore({ directory }));
      const other = createFileTapeStore({ directory });
      const bub = await bubOver(dir.path, mine.store);
      await turn(bub, mine.calls, "one");
      const [tape] = await other.listTapes();
      assert.ok(tape);
      // Another process switches the session's model and adds a note to the context.
      await other.appendBatch(tape, [entries.event("model_switch", { model: "fake:other-model" }), entries.message({ role: "user", content: "note from elsewhere" })]);
      await turn(bub, mine.calls, "two");
      const request = server.requests.at(-1)?.body;
      assert.equal(request?.model, "other-model");
      assert.ok(request?.messages.some((message) => message.content === "note from elsewhere"), "the other process's message is in the context");
      // Another process resets the tape: the next turn starts from an empty tape, switch gone.
      await other.reset(tape);
      const made = await turn(bub, mine.calls, "three");
      const after = server.requests.at(-1)?.body;
      assert.equal(after?.model, "model");
      assert.deepEqual(after?.messages.filter((message) => message.role !== "system").map((message) => message.content), ["three"]);
      assert.ok(made.length <= 5, describeCalls(made));
      await mine.store.close?.();
      await other.close();
    } finally {
      await dir.cleanup();
    }
  });
});
