/**
 * `bub tape list`, `show` and `export` on the installed binary, reading the tape a `bub run`
 * with a tool call wrote against the fake OpenAI-compatible server.
 */
import assert from "node:assert/strict";
import { realpath, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";

describe("bub tape (installed package)", () => {
  let openai: FakeOpenAI;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let env: Record<string, string>;
  before(async () => {
    await installedPackage();
    openai = await startFakeOpenAI();
    home = await tempHome();
    env = { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "local:small-model", BUB_LOCAL_API_BASE: openai.url };
    await writeFile(join(home.path, "notes.txt"), "buy milk\n");
    openai.script(
      reply.toolCalls([{ id: "call_notes", name: "fs_read", arguments: '{"path":"notes.txt"}' }], { usage: { prompt_tokens: 100, completion_tokens: 10 } }),
      reply.text("The notes say: buy milk.", { usage: { prompt_tokens: 120, completion_tokens: 8 } }),
    );
    const run = await runBub(["run", "what do my notes say?"], { home: home.path, env });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /The notes say: buy milk\./);
  });
  after(async () => {
    await openai.close();
    await home.cleanup();
  });

  it("lists the session the run wrote, with its workspace, one turn and its entries", async () => {
    const result = await runBub(["tape", "list", "--json"], { home: home.path, env });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stderr, "");
    const rows = JSON.parse(result.stdout) as Record<string, unknown>[];
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.session_id, "cli:local");
    assert.equal(rows[0]!.workspace, await realpath(home.path));
    assert.equal(rows[0]!.turns, 1);
    assert.ok(Number(rows[0]!.entries) >= 14);
    const table = await runBub(["tape", "list"], { home: home.path, env });
    assert.match(table.stdout, /^SESSION +WORKSPACE +ENTRIES +TURNS +LAST ACTIVITY +SIZE\ncli:local +~ +\d+ +1 +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC +[\d.]+ KB\n$/);
  });

  it("shows the turn: the question, the tool call and its result, the answer, the usage", async () => {
    const result = await runBub(["tape", "show", "cli:local"], { home: home.path, env });
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.split("\n");
    assert.ok(lines.some((line) => /^Turn 1 · .* · local:small-model · 2 model calls · 1 tool call · 220 in \/ 18 out tokens$/.test(line)), result.stdout);
    assert.ok(lines.some((line) => /^ {2}turn_id [0-9a-f-]{36}$/.test(line)));
    assert.ok(lines.includes("  user         what do my notes say?"));
    assert.ok(lines.includes('  tool call    fs_read {"path":"notes.txt"}'));
    assert.ok(lines.includes("  tool result  fs_read: buy milk"));
    assert.ok(lines.includes("  assistant    The notes say: buy milk."));
  });

  it("exports the session as Markdown, and as the tape's own JSON lines with the turn's ids", async () => {
    const markdown = await runBub(["tape", "export", "cli:local", "--format", "markdown"], { home: home.path, env });
    assert.equal(markdown.code, 0, markdown.stderr);
    assert.match(markdown.stdout, /^# Session `cli:local`\n/);
    assert.match(markdown.stdout, /\*\*Tool call\*\* `fs_read` \(`call_notes`\)/);
    assert.match(markdown.stdout, /\*\*Assistant\*\*\n\nThe notes say: buy milk\./);
    const jsonl = await runBub(["tape", "export", "cli:local"], { home: home.path, env });
    const entries = jsonl.stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as { kind: string; meta: Record<string, unknown> });
    const turnIds = new Set(entries.map((entry) => entry.meta.turn_id));
    assert.equal(turnIds.size, 1);
    assert.match(String([...turnIds][0]), /^[0-9a-f]{8}-[0-9a-f]{4}-7/);
    assert.deepEqual(entries.find((entry) => entry.kind === "tool_result")!.meta.tool_call_ids, ["call_notes"]);
  });

  it("says what to do for a session it does not know, exit 1", async () => {
    const result = await runBub(["tape", "show", "cli:nobody"], { home: home.path, env });
    assert.equal(result.code, 1);
    assert.equal(result.stdout, "");
    assert.equal(result.stderr, 'bub: No tape for session "cli:nobody" — run `bub tape list` to see the sessions and their tape names\n');
  });
});
