// A turn's entries are encoded (and redacted, and parsed back) once, when the turn writes them
// into its fork: the merge hands those encodings to bub's own stores, which write them without
// calling JSON.stringify or JSON.parse on the entries again. What the stores then hold is what
// the turn read back from its fork, ids apart, and a plugin's store still gets plain entries.
import assert from "node:assert/strict";
import { afterEach, describe, it, mock } from "node:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { forgetSecrets, rememberSecrets } from "../../src/config/redaction.ts";
import type { NewTapeEntry, TapeEntry, TapeStore } from "../../src/kernel/tape-contract.ts";
import { entries } from "../../src/tape/entry.ts";
import { createFileTapeStore } from "../../src/tape/file-store.ts";
import { createMemoryTapeStore } from "../../src/tape/memory-store.ts";
import { createSqliteTapeStore } from "../../src/tape/sqlite-store.ts";
import { createTapes } from "../../src/tape/tapes.ts";
import { tempDir } from "./support/helpers.ts";

const MARKER = "marker-7f3a";
const SECRET = "sk-test-secret-0123456789";

/** Whether a value (an object walked by hand, not through JSON) holds the marker anywhere. */
function mentionsMarker(value: unknown, depth = 0): boolean {
  if (typeof value === "string") return value.includes(MARKER);
  if (depth > 20 || typeof value !== "object" || value === null) return false;
  return Object.entries(value).some(([key, item]) => key.includes(MARKER) || mentionsMarker(item, depth + 1));
}

/** Runs `work` and counts the JSON.stringify and JSON.parse calls it made on text or data holding the marker. */
async function countEntryJson(work: () => Promise<unknown>): Promise<{ stringify: number; parse: number }> {
  const stringify = mock.method(JSON, "stringify");
  const parse = mock.method(JSON, "parse");
  try {
    await work();
    return {
      stringify: stringify.mock.calls.filter((call) => mentionsMarker(call.arguments[0])).length,
      parse: parse.mock.calls.filter((call) => mentionsMarker(call.arguments[0])).length,
    };
  } finally {
    stringify.mock.restore();
    parse.mock.restore();
  }
}

/** One agent step's entries, each mentioning the marker; one also holds a configured secret. */
function step(n: number): NewTapeEntry[] {
  return [
    entries.message({ role: "user", content: `${MARKER} question ${n} ü` }, { run_id: `run-${n}` }),
    entries.toolCall([{ id: `call-${n}`, type: "function", function: { name: "fs_read", arguments: `{"path":"${MARKER}.txt"}` } }], { run_id: `run-${n}` }),
    entries.toolResult([`${MARKER} the key is ${SECRET}`], { run_id: `run-${n}` }),
    entries.event("run", { status: "ok", note: MARKER }, { run_id: `run-${n}` }),
  ];
}

const withoutId = ({ id: _id, ...rest }: TapeEntry) => rest;

const stores: readonly (readonly [string, (directory: string) => TapeStore])[] = [
  ["file", (directory) => createFileTapeStore({ directory })],
  ["sqlite", (directory) => createSqliteTapeStore({ path: join(directory, "tapes.sqlite3") })],
  ["memory", () => createMemoryTapeStore()],
];

describe("a fork's entries are encoded once", () => {
  afterEach(() => forgetSecrets());

  for (const [kind, make] of stores) {
    it(`merges into the ${kind} store without encoding or parsing an entry again, and the store holds what the turn read`, async () => {
      rememberSecrets([{ name: "api_key", value: SECRET }]);
      const directory = tempDir(`encode-once-${kind}`);
      const store = make(directory);
      const tapes = createTapes({ store, archivePath: directory });
      const session = tapes.sessionTape("chat:1", directory);
      // Two turns as the agent runs them: a snapshot of the session tape, a fork of it, merged.
      for (const turn of [1, 2]) {
        const read = tapes.snapshot(session);
        const fork = tapes.fork(read.tape);
        await fork.tape.ensureBootstrapAnchor();
        await fork.tape.appendBatch(step(turn).slice(0, 2));
        await fork.tape.appendBatch(step(turn).slice(2));
        const seen = (await fork.tape.search({ tape: session.name })).map(withoutId);
        const calls = await countEntryJson(() => fork.merge());
        assert.deepEqual(calls, { stringify: 0, parse: 0 }, "the merge encoded or parsed an entry again");
        const stored = await store.fetchAll({ tape: session.name });
        assert.deepEqual(stored.map(withoutId), seen, "the store holds what the fork read back");
        assert.deepEqual(
          stored.map((entry) => entry.id),
          stored.map((_, index) => index + 1),
        );
        // The snapshot the turn read through holds the merged entries as the store does.
        assert.deepEqual(await read.tape.store.fetchAll({ tape: session.name }), stored);
      }
      const results = (await store.fetchAll({ tape: session.name, kinds: ["tool_result"] })).map((entry) => entry.payload.results);
      assert.deepEqual(results, [[`${MARKER} the key is [redacted:api_key]`], [`${MARKER} the key is [redacted:api_key]`]]);
      if (kind === "file") {
        const text = readFileSync(join(directory, `${session.name}.jsonl`), "utf8");
        assert.ok(!text.includes(SECRET) && text.includes("[redacted:api_key]"), "the secret never reaches the file");
      }
      await store.close?.();
    });
  }

  it("gives a plugin's store (no encoded appends) the redacted entries through appendBatch", async () => {
    rememberSecrets([{ name: "api_key", value: SECRET }]);
    const inner = createMemoryTapeStore();
    const received: NewTapeEntry[] = [];
    const plugin: TapeStore = {
      listTapes: () => inner.listTapes(),
      fetchAll: (query) => inner.fetchAll(query),
      append: (tape, entry) => inner.append(tape, entry),
      appendBatch: async (tape, batch) => {
        received.push(...batch);
        return inner.appendBatch(tape, batch);
      },
      reset: (tape) => inner.reset(tape),
    };
    const directory = tempDir("encode-once-plugin");
    const tapes = createTapes({ store: plugin, archivePath: directory });
    const fork = tapes.fork(tapes.sessionTape("chat:1", directory));
    await fork.tape.appendBatch(step(1));
    const seen = (await fork.tape.search({ tape: fork.tape.name })).map(withoutId);
    await fork.merge();
    assert.deepEqual(received.map((entry) => ({ kind: entry.kind, payload: entry.payload, meta: entry.meta, date: entry.date })), seen);
    assert.ok(!mentionsSecret(received));
  });
});

function mentionsSecret(value: unknown): boolean {
  if (typeof value === "string") return value.includes(SECRET);
  if (typeof value !== "object" || value === null) return false;
  return Object.values(value).some(mentionsSecret);
}
