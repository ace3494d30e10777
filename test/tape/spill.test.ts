// The spill sidecar: when results spill, the exact notice and preview, chunking, paged reads,
// failures, and how spills follow the tape through forks and resets.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import type { NewTapeEntry, TapeStore } from "../../src/kernel/tape-contract.ts";
import { createDefaultTapeContext } from "../../src/tape/context.ts";
import { entries } from "../../src/tape/entry.ts";
import { createFileTapeStore } from "../../src/tape/file-store.ts";
import { forkTape } from "../../src/tape/fork.ts";
import { createMemoryTapeStore } from "../../src/tape/memory-store.ts";
import { SPILL_CHUNK_BYTES, createSpillSidecar, spillPreview, spillRead, type SpillSidecar } from "../../src/tape/spill.ts";
import { createTape, type Tape } from "../../src/tape/tape.ts";
import { bubError, captureLogs, tempDir } from "./support/helpers.ts";

function spillTape(store: TapeStore = createMemoryTapeStore(), threshold = 1, archivePath = tempDir("spill-archive")): { tape: Tape; spill: SpillSidecar } {
  const spill = createSpillSidecar({ threshold });
  return { tape: createTape({ name: "ws__session", store, context: createDefaultTapeContext(), sidecars: [spill], archivePath }), spill };
}

const handleOf = (notice: string) => /handle: ([0-9a-f]{32})\]/.exec(notice)![1]!;
const field = (page: string, name: string) => page.split("\n").find((line) => line.startsWith(`${name}: `))!.slice(name.length + 2);
const contentOf = (page: string) => page.slice(page.indexOf("content:\n") + "content:\n".length);

async function readAll(tape: Tape, handle: string, count = 2): Promise<string> {
  let cursor = 0;
  let text = "";
  for (;;) {
    const page = await spillRead(tape, { handle, cursor, count });
    text += contentOf(page);
    if (field(page, "complete") === "true") return text;
    cursor = Number(field(page, "next_cursor"));
  }
}

describe("spill sidecar: writing", () => {
  it("leaves small results, spill.read results and disabled spilling alone", async () => {
    const { tape, spill } = spillTape(createMemoryTapeStore(), 100);
    assert.equal(tape.getSidecar("spill"), spill);
    assert.equal(await spill.spillToolResult(tape, "x".repeat(399), { tool: "t", runId: "r" }), "x".repeat(399));
    assert.equal(await spill.spillToolResult(tape, "x".repeat(5000), { tool: "spill.read", runId: "r" }), "x".repeat(5000));
    assert.equal(await spill.spillToolResult(tape, "x".repeat(5000), { tool: "spill_read", runId: "r" }), "x".repeat(5000));
    const disabled = spillTape(createMemoryTapeStore(), 0);
    assert.equal(await disabled.spill.spillToolResult(disabled.tape, "x".repeat(100_000), { tool: "t", runId: "r" }), "x".repeat(100_000));
    assert.deepEqual(await tape.store.listTapes(), []);
    assert.equal(createSpillSidecar().threshold, 4096);
    assert.throws(() => createSpillSidecar({ threshold: -1 }), bubError("config", /BUB_SPILL_THRESHOLD/));
  });

  it("counts the threshold in characters (code points), 4 per estimated token", async () => {
    const { tape, spill } = spillTape(createMemoryTapeStore(), 2);
    assert.equal(await spill.spillToolResult(tape, "🙂".repeat(7), { tool: "t", runId: "r" }), "🙂".repeat(7));
    assert.match(await spill.spillToolResult(tape, "🙂".repeat(8), { tool: "t", runId: "r" }), /^\[tool output spilled: 32 bytes in 1 chunks;/);
  });

  it("stores chunks with a manifest and returns the reference notice with a preview", async () => {
    const store = createMemoryTapeStore();
    const { tape, spill } = spillTape(store);
    const output = `${"alpha🙂beta\n".repeat(5000)}the-end`;
    const notice = await spill.spillToolResult(tape, output, { tool: "bash", runId: "run-1" });
    const handle = handleOf(notice);
    const bytes = Buffer.byteLength(output);
    const chunks = Math.ceil(bytes / SPILL_CHUNK_BYTES);
    assert.equal(
      notice,
      `[tool output spilled: ${bytes.toLocaleString("en-US")} bytes in ${chunks} chunks; handle: ${handle}]\n` +
        `[read with: spill_read(handle='${handle}', cursor=0, count=1, from_end=False)]\n` +
        spillPreview(output),
    );
    assert.ok(notice.length < 2000);
    const sidecar = await store.fetchAll({ tape: tape.sidecarTapeName("spill") });
    assert.equal(sidecar.length, chunks * 2 + 2);
    assert.deepEqual(sidecar.slice(0, 2).map(({ kind, payload, meta }) => ({ kind, name: payload.name, meta })), [
      { kind: "anchor", name: `spill/${handle}/chunk/0`, meta: {} },
      { kind: "tool_result", name: undefined, meta: { spill_handle: handle, spill_chunk: 0 } },
    ]);
    for (const entry of sidecar.filter((item) => item.kind === "tool_result")) {
      assert.ok(Buffer.byteLength((entry.payload.results as string[])[0]!) <= SPILL_CHUNK_BYTES);
    }
    assert.deepEqual(sidecar.at(-2)!.payload, { name: `spill/${handle}/manifest` });
    assert.deepEqual(sidecar.at(-1)!.payload, {
      name: "spill.manifest",
      data: { handle, chunks, bytes, chars: 11 * 5000 + 7, lines: 5001, tool: "bash" },
    });
    assert.deepEqual(sidecar.at(-1)!.meta, { spill_handle: handle, run_id: "run-1" });
    const [write] = await store.fetchAll({ tape: tape.name });
    assert.deepEqual([write!.payload, write!.meta], [{ name: "spill.write", data: { status: "ok", handle, bytes, chunks, tool: "bash" } }, { run_id: "run-1", context: false }]);
  });

  it("previews short results whole and long ones as head and tail", () => {
    assert.equal(spillPreview("short"), "short");
    assert.equal(spillPreview("y".repeat(600)), "y".repeat(600));
    const long = `${"a".repeat(300)}${"m".repeat(1234)}${"🙂".repeat(300)}`;
    assert.equal(spillPreview(long), `${"a".repeat(300)}\n...[1,234 chars omitted]...\n${"🙂".repeat(300)}`);
  });

  it("truncates to the preview and records the failure when the sidecar cannot be written", async () => {
    const inner = createMemoryTapeStore();
    const broken: TapeStore = {
      ...inner,
      appendBatch: async (tape: string, batch: readonly NewTapeEntry[]) => {
        if (tape.endsWith("__sidecar__spill")) throw new Error("no space left");
        return inner.appendBatch(tape, batch);
      },
    };
    const { tape, spill } = spillTape(broken);
    const logs = captureLogs();
    try {
      const output = "z".repeat(20_000);
      const result = await spill.spillToolResult(tape, output, { tool: "web.fetch", runId: "run-7" });
      assert.equal(result, `[tool output truncated: 20,000 bytes; spill storage failed]\n${spillPreview(output)}`);
      const [write] = await inner.fetchAll({ tape: tape.name });
      const data = write!.payload.data as Record<string, unknown>;
      assert.deepEqual({ ...data, handle: "" }, { status: "error", handle: "", bytes: 20_000, tool: "web.fetch", error: "no space left" });
      assert.ok(logs.records.some((record) => record.message === "tool result spill failed tool=web.fetch error=no space left"));
    } finally {
      logs.restore();
    }
  });
});

describe("spill sidecar: reading", () => {
  it("pages forward and from the end, and caps a read at 4 chunks", async () => {
    const { tape, spill } = spillTape();
    const output = Array.from({ length: 8000 }, (_, index) => `line ${index} ✓`).join("\n");
    const handle = handleOf(await spill.spillToolResult(tape, output, { tool: "t", runId: "r" }));
    assert.equal(await readAll(tape, handle), output);
    const first = await spillRead(tape, { handle });
    assert.match(first, new RegExp(`^\\[spilled tool result: ${Buffer.byteLength(output).toLocaleString("en-US")} bytes, 7 chunks\\]\nchunks: 0-0\nnext_cursor: 1\ncomplete: false\ncontent:\nline 0 ✓\n`));
    const capped = await spillRead(tape, { handle, count: 10 });
    assert.equal(field(capped, "chunks"), "0-3");
    assert.equal(field(capped, "next_cursor"), "4");
    const tail = await spillRead(tape, { handle, fromEnd: true });
    assert.equal(field(tail, "chunks"), "6-6");
    assert.ok(contentOf(tail).endsWith("line 7999 ✓"));
    const rest = await spillRead(tape, { handle, fromEnd: true, cursor: 1, count: 4 });
    assert.deepEqual([field(rest, "chunks"), field(rest, "next_cursor"), field(rest, "complete")], ["2-5", "5", "false"]);
    const last = await spillRead(tape, { handle, fromEnd: true, cursor: 5, count: 4 });
    assert.deepEqual([field(last, "chunks"), field(last, "next_cursor"), field(last, "complete")], ["0-1", "7", "true"]);
    const beyond = await spillRead(tape, { handle, cursor: 99 });
    assert.deepEqual([field(beyond, "chunks"), field(beyond, "next_cursor"), field(beyond, "complete"), contentOf(beyond)], ["none", "7", "true", ""]);
  });

  it("answers bad arguments, unknown handles and missing sidecars with the reference texts", async () => {
    const { tape } = spillTape();
    assert.equal(await spillRead(tape, { handle: "missing" }), "[no spilled tool result for handle 'missing']");
    assert.equal(await spillRead(tape, { handle: "it's" }), `[no spilled tool result for handle "it's"]`);
    assert.equal(await spillRead(tape, { handle: "x", cursor: -1 }), "`cursor` must be >= 0.");
    assert.equal(await spillRead(tape, { handle: "x", count: 0 }), "`count` must be >= 1.");
    const bare = createTape({ name: "ws__bare", store: createMemoryTapeStore(), archivePath: "/unused" });
    assert.equal(await spillRead(bare, { handle: "x" }), "spill sidecar unavailable in this context.");
  });

  it("reports a spill whose chunks are missing or damaged", async () => {
    const store = createMemoryTapeStore();
    const { tape, spill } = spillTape(store);
    const handle = handleOf(await spill.spillToolResult(tape, "q".repeat(40_000), { tool: "t", runId: "r" }));
    const sidecarTape = tape.sidecarTapeName("spill");
    const kept = (await store.fetchAll({ tape: sidecarTape })).filter((entry) => !(entry.kind === "tool_result" && entry.meta.spill_chunk === 2));
    await store.reset(sidecarTape);
    await store.appendBatch(sidecarTape, kept);
    assert.equal(await spillRead(tape, { handle, cursor: 1, count: 2 }), `[incomplete spilled tool result: missing chunks for handle '${handle}']`);
    await store.append(sidecarTape, entries.toolResult(["forged"], { spill_handle: "other", spill_chunk: 2 }));
    assert.equal(await spillRead(tape, { handle, cursor: 2 }), `[incomplete spilled tool result: invalid chunk 2 for handle '${handle}']`);
    await store.reset(sidecarTape);
    await store.appendBatch(sidecarTape, kept.filter((entry) => entry.payload.name !== `spill/${handle}/chunk/1`));
    assert.equal(await spillRead(tape, { handle, cursor: 1 }), `[incomplete spilled tool result: missing chunk 1 for handle '${handle}']`);
  });
});

describe("spill sidecar: with forks and resets", () => {
  it("is readable inside a fork, after merging into a file store, and stays out of the context", async () => {
    const store = createFileTapeStore({ directory: tempDir("spill-file") });
    const { tape, spill } = spillTape(store);
    const output = "big output ".repeat(3000);
    const fork = forkTape(tape);
    const notice = await spill.spillToolResult(fork.tape, output, { tool: "t", runId: "run-1" });
    const handle = handleOf(notice);
    assert.equal(await readAll(fork.tape, handle), output);
    assert.deepEqual(await store.fetchAll({ tape: tape.sidecarTapeName("spill") }), [], "nothing persisted before the merge");
    await fork.tape.recordChat({ runId: "run-1", newMessages: [], toolCalls: [{ id: "c", type: "function", function: { name: "t", arguments: "{}" } }], toolResults: [notice] });
    await fork.tape.ensureBootstrapAnchor();
    await fork.merge();
    assert.equal(await readAll(tape, handle), output);
    const body = JSON.stringify(await tape.withContext({ anchor: null, select: createDefaultTapeContext().select, state: {} }).readMessages());
    assert.ok(body.includes(handle));
    assert.ok(!body.includes(output));
    assert.ok(!body.includes("spill.write"));
  });

  it("is dropped with a discarded fork", async () => {
    const { tape, spill } = spillTape();
    const fork = forkTape(tape, { mergeBack: false });
    const handle = handleOf(await spill.spillToolResult(fork.tape, "x".repeat(20_000), { tool: "t", runId: "r" }));
    assert.match(await spillRead(fork.tape, { handle }), /content:/);
    fork.discard();
    assert.equal(await spillRead(tape, { handle }), `[no spilled tool result for handle '${handle}']`);
  });

  it("is archived and cleared with the tape", async () => {
    const archivePath = tempDir("spill-archived");
    const { tape, spill } = spillTape(createMemoryTapeStore(), 1, archivePath);
    await tape.ensureBootstrapAnchor();
    const handle = handleOf(await spill.spillToolResult(tape, "archived output\n".repeat(5000), { tool: "t", runId: "r" }));
    const result = await tape.reset({ archive: true });
    const mainArchive = result.replace("Archived: ", "");
    assert.ok(readFileSync(mainArchive, "utf8").includes(handle));
    const sidecarArchive = mainArchive.replace("ws__session.jsonl", "ws__session__sidecar__spill.jsonl");
    assert.ok(readFileSync(sidecarArchive, "utf8").includes(`spill/${handle}/manifest`));
    assert.equal(await spillRead(tape, { handle }), `[no spilled tool result for handle '${handle}']`);
  });
});
