// The session tape object: naming, bootstrap and handoff, info, chat records, reset and archives.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { TapeStore } from "../../src/kernel/tape-contract.ts";
import { BubError } from "../../src/kernel/errors.ts";
import { entries } from "../../src/tape/entry.ts";
import { createFileTapeStore } from "../../src/tape/file-store.ts";
import { createMemoryTapeStore } from "../../src/tape/memory-store.ts";
import { createSpillSidecar } from "../../src/tape/spill.ts";
import { createTape } from "../../src/tape/tape.ts";
import { createTapes, sessionTapeName } from "../../src/tape/tapes.ts";
import { bubError, tempDir } from "./support/helpers.ts";

const md5 = (text: string) => createHash("md5").update(text).digest("hex").slice(0, 16);
const kindsAndNames = (found: { kind: string; payload: Record<string, unknown> }[]) => found.map((entry) => `${entry.kind}:${String(entry.payload.name ?? entry.payload.role ?? "")}`);

describe("session tape names", () => {
  it("hash the resolved workspace and the session id like the reference", () => {
    const workspace = tempDir("workspace");
    const real = realpathSync(workspace);
    assert.equal(sessionTapeName("telegram:42", workspace), `${md5(real)}__${md5("telegram:42")}`);
    const link = join(tempDir("links"), "ws-link");
    symlinkSync(workspace, link);
    assert.equal(sessionTapeName("s", link), sessionTapeName("s", `${workspace}/./`));
    const missing = join(real, "not", "there");
    assert.equal(sessionTapeName("s", missing), `${md5(missing)}__${md5("s")}`);
  });

  it("keep the reference runtime's known file names", () => {
    // md5 of the UTF-8 bytes, as Python's hashlib gives them (checked with md5sum).
    assert.equal(sessionTapeName("telegram:42", "/"), "6666cd76f9695646__bd8cdd776d6ba381");
    assert.equal(sessionTapeName("cli:café", "/"), "6666cd76f9695646__41b1b1554e17145c");
  });

  it("are used by the tape service, which dedupes sidecars by name", () => {
    const first = createSpillSidecar({ threshold: 1 });
    const tapes = createTapes({ store: createMemoryTapeStore(), sidecars: [first, createSpillSidecar(), { name: "audit" }], archivePath: "/unused" });
    const tape = tapes.sessionTape("cli:local", "/tmp");
    assert.equal(tape.name, sessionTapeName("cli:local", "/tmp"));
    assert.deepEqual(tape.sidecars.map((sidecar) => sidecar.name), ["spill", "audit"]);
    assert.equal(tape.getSidecar("spill"), first);
    assert.equal(tape.sidecarTapeName("audit"), `${tape.name}__sidecar__audit`);
    assert.throws(() => tape.sidecarTapeName("nope"), bubError("not_found", /Tape sidecar 'nope' is not mounted on tape .* \(mounted: spill, audit\)/));
    assert.equal(tapes.tape("x__y").name, "x__y");
  });
});

describe("Tape", () => {
  function newTape(store: TapeStore = createMemoryTapeStore(), archivePath = tempDir("archive")) {
    return createTape({ name: "ws__session", store, archivePath, sidecars: [{ name: "spill" }, { name: "notes" }] });
  }

  it("adds the bootstrap anchor and handoff event once", async () => {
    const tape = newTape();
    await tape.ensureBootstrapAnchor();
    await tape.ensureBootstrapAnchor();
    const found = await tape.search(tape.query());
    assert.deepEqual(found.map(({ kind, payload }) => ({ kind, payload })), [
      { kind: "anchor", payload: { name: "session/start", state: { owner: "human" } } },
      { kind: "event", payload: { name: "handoff", data: { name: "session/start", state: { owner: "human" } } } },
    ]);
  });

  it("hands off with an anchor and a handoff event sharing meta, and lists anchors", async () => {
    const tape = newTape();
    await tape.ensureBootstrapAnchor();
    const [anchor, event] = await tape.handoff("phase/2", { summary: "done with 1" }, { run_id: "r9" });
    assert.deepEqual([anchor!.meta, event!.meta], [{ run_id: "r9" }, { run_id: "r9" }]);
    await tape.handoff("phase/3");
    assert.deepEqual((await tape.search(tape.query().kinds("event"))).at(-1)!.payload, { name: "handoff", data: { name: "phase/3", state: {} } });
    assert.deepEqual(await tape.anchors(), [
      { name: "session/start", state: { owner: "human" } },
      { name: "phase/2", state: { summary: "done with 1" } },
      { name: "phase/3", state: {} },
    ]);
    assert.deepEqual((await tape.anchors(1)).map((anchor) => anchor.name), ["phase/3"]);
  });

  it("summarises entries, anchors and the last token usage", async () => {
    const tape = newTape();
    assert.deepEqual(await tape.info(), { name: "ws__session", entries: 0, anchors: 0, lastAnchor: null, entriesSinceLastAnchor: 0, lastTokenUsage: null, lastTokenCacheHitRate: null });
    await tape.ensureBootstrapAnchor();
    await tape.recordChat({ runId: "r1", newMessages: [], usage: { prompt_tokens: 80, completion_tokens: 20, total_tokens: 100, prompt_tokens_details: { cached_tokens: 60 } } });
    await tape.appendEvent("run", { usage: { total_tokens: "not a number" } });
    let info = await tape.info();
    assert.deepEqual(info, { name: "ws__session", entries: 4, anchors: 1, lastAnchor: "session/start", entriesSinceLastAnchor: 3, lastTokenUsage: 100, lastTokenCacheHitRate: 0.75 });
    await tape.recordChat({ runId: "r2", newMessages: [], usage: { prompt_tokens: 80, total_tokens: 90 } });
    info = await tape.info();
    assert.equal(info.lastTokenUsage, 90);
    assert.equal(info.lastTokenCacheHitRate, null);
  });

  it("records a chat step as one batch in the reference's order", async () => {
    const store = createMemoryTapeStore();
    const tape = newTape(store);
    const calls = [{ id: "c1", type: "function", function: { name: "fs_read", arguments: "{}" } }];
    const contextError = new BubError("not_found", "Anchor 'x' was not found.");
    await tape.recordChat({
      runId: "run-1",
      systemPrompt: "system text",
      contextError,
      newMessages: [{ role: "user", content: "hi" }],
      toolCalls: calls,
      toolResults: ["result"],
      error: new BubError("tool", "failed"),
      responseText: "answer",
      usage: { total_tokens: 5 },
      provider: "openrouter",
      model: "openrouter:free",
    });
    const found = await tape.search({ tape: tape.name });
    assert.deepEqual(kindsAndNames(found), ["system:", "error:", "message:user", "tool_call:", "tool_result:", "error:", "message:assistant", "event:run"]);
    assert.ok(found.every((entry) => entry.meta.run_id === "run-1"));
    assert.deepEqual(found.at(-1)!.payload, { name: "run", data: { status: "error", usage: { total_tokens: 5 }, provider: "openrouter", model: "openrouter:free" } });
    await tape.recordChat({ runId: "run-2", newMessages: [], error: contextError, contextError, responseText: null });
    assert.deepEqual(kindsAndNames((await tape.search({ tape: tape.name })).slice(8)), ["error:", "event:run"]);
  });

  it("resets without archiving: starts again and resets the sidecars", async () => {
    const store = createMemoryTapeStore();
    const tape = newTape(store);
    await tape.ensureBootstrapAnchor();
    await tape.appendEvent("old", {});
    await store.append(tape.sidecarTapeName("spill"), entries.event("chunk"));
    assert.equal(await tape.reset(), "ok");
    const found = await tape.search({ tape: tape.name });
    assert.deepEqual(found.map((entry) => [entry.id, entry.kind, entry.payload.name, entry.meta]), [
      [1, "anchor", "session/start", {}],
      [2, "event", "handoff", {}],
      [3, "event", "sidecar.reset", { context: false }],
      [4, "event", "sidecar.reset", { context: false }],
    ]);
    assert.deepEqual(found[2]!.payload.data, { sidecar: "spill", status: "ok", reason: "tape.reset" });
    assert.deepEqual(await store.fetchAll({ tape: tape.sidecarTapeName("spill") }), []);
    assert.deepEqual(await tape.readMessages(), [], "the sidecar events stay out of context");
  });

  it("archives the tape and its sidecars before a reset", async () => {
    const archivePath = join(tempDir("archives"), "tapes");
    const store = createFileTapeStore({ directory: tempDir("tapes") });
    const tape = newTape(store, archivePath);
    await tape.ensureBootstrapAnchor();
    const note = await tape.appendEvent("note", { text: "keep me ✓" });
    const chunk = await store.append(tape.sidecarTapeName("spill"), entries.event("chunk"));
    const result = await tape.reset({ archive: true });
    const archived = result.replace(/^Archived: /, "");
    assert.match(archived, new RegExp(`^${archivePath}/ws__session\\.jsonl\\.\\d{8}T\\d{6}Z\\.bak$`));
    const lines = readFileSync(archived, "utf8").trimEnd().split("\n").map((line) => JSON.parse(line));
    assert.deepEqual(lines.at(-1), note);
    const spillArchive = readdirSync(archivePath).find((name) => name.startsWith("ws__session__sidecar__spill.jsonl."));
    assert.deepEqual(JSON.parse(readFileSync(join(archivePath, spillArchive!), "utf8")), chunk);
    const found = await tape.search({ tape: tape.name });
    assert.deepEqual(found[0]!.payload, { name: "session/start", state: { owner: "human", archived } });
    assert.deepEqual(found.slice(2).map((entry) => [entry.payload.name, (entry.payload.data as Record<string, unknown>).sidecar, (entry.payload.data as Record<string, unknown>).status]), [
      ["sidecar.archive", "spill", "ok"],
      ["sidecar.reset", "spill", "ok"],
      ["sidecar.archive", "notes", "ok"],
      ["sidecar.reset", "notes", "ok"],
    ]);
    assert.deepEqual(await store.fetchAll({ tape: tape.sidecarTapeName("spill") }), []);
    const again = (await tape.reset({ archive: true })).replace(/^Archived: /, "");
    assert.notEqual(again, archived, "a second archive never overwrites the first");
  });

  it("skips resetting a sidecar whose archive failed", async () => {
    const archivePath = tempDir("archive-fail");
    const store = createMemoryTapeStore();
    const tape = newTape(store, archivePath);
    await store.append(tape.sidecarTapeName("spill"), entries.event("precious"));
    const failing: TapeStore = {
      ...store,
      fetchAll: async (query) => {
        if (query.tape.endsWith("__sidecar__spill")) throw new Error("disk on fire");
        return store.fetchAll(query);
      },
    };
    const result = await newTape(failing, archivePath).reset({ archive: true });
    assert.match(result, /^Archived: /);
    const events = (await store.fetchAll({ tape: tape.name, kinds: ["event"] })).filter((entry) => String(entry.payload.name).startsWith("sidecar."));
    assert.deepEqual(events.slice(0, 2).map((entry) => entry.payload.data), [
      { sidecar: "spill", status: "error", reason: "tape.reset", error: "disk on fire" },
      { sidecar: "spill", status: "skipped", reason: "tape.reset", cause: "archive_failed" },
    ]);
    assert.equal((await store.fetchAll({ tape: tape.sidecarTapeName("spill") })).length, 1, "the sidecar was kept");
  });

  it("archives and resets one sidecar on request", async () => {
    const archivePath = tempDir("sidecar-ops");
    const store = createMemoryTapeStore();
    const tape = newTape(store, archivePath);
    await store.append(tape.sidecarTapeName("notes"), entries.event("n"));
    assert.match(await tape.archiveSidecar("notes"), new RegExp(`^Archived notes: ${archivePath}/ws__session__sidecar__notes\\.jsonl\\.\\d{8}T\\d{6}Z\\.bak$`));
    assert.equal(await tape.resetSidecar("notes"), "ok");
    assert.deepEqual(await store.fetchAll({ tape: tape.sidecarTapeName("notes") }), []);
    mkdirSync(join(archivePath, "blocked"));
    writeFileSync(join(archivePath, "blocked", "file"), "");
    const blocked = createTape({ name: "ws__session", store, archivePath: join(archivePath, "blocked", "file"), sidecars: [{ name: "notes" }] });
    assert.match(await blocked.resetSidecar("notes", { archive: true, reason: "gc" }), /^notes archive failed: .*; notes reset skipped$/);
    const last = (await store.fetchAll({ tape: tape.name })).at(-1)!;
    assert.deepEqual([last.payload.name, last.meta], ["sidecar.reset", { context: false }]);
    assert.deepEqual(last.payload.data, { sidecar: "notes", status: "skipped", reason: "gc", cause: "archive_failed" });
  });
});
