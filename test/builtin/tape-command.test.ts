// `bub tape list | show | export` on tapes a real turn wrote (builtin plugin, fake model).
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { createBub } from "../../src/builtin/create.ts";
import { runTapeList, formatTapeList, humanBytes } from "../../src/builtin/commands/tape-list.ts";
import { runTapeExport, runTapeShow } from "../../src/builtin/commands/tape-show.ts";
import { ChannelMessage } from "../../src/channels/message.ts";
import { resolveWorkspace } from "../../src/tape/tapes.ts";
import { reply } from "../support/fake-openai.ts";
import { useFakeOpenAI } from "../support/fake-openai-suite.ts";
import { tempDir } from "../support/temp.ts";

function output(): { write(text: string): void; text: string } {
  const out = { text: "", write: (text: string) => void (out.text += text) };
  return out;
}

describe("bub tape list, show and export", () => {
  const server = useFakeOpenAI();

  /** A workspace with notes.txt and a BUB_HOME where one tool-call turn ran in session cli:local. */
  async function afterATurn(extra: Record<string, string> = {}) {
    const dir = await tempDir();
    const home = join(dir.path, ".bub");
    const env = { BUB_MODEL: "fake:any", BUB_API_BASE: server.url, BUB_API_KEY: "sk-test", BUB_HOME: home, ...extra };
    await writeFile(join(dir.path, "notes.txt"), "buy milk\n");
    const framework = await createBub({ workspace: dir.path, home, env });
    server.script(
      reply.toolCalls([{ id: "call_notes", name: "fs_read", arguments: '{"path":"notes.txt"}' }], { usage: { prompt_tokens: 100, completion_tokens: 10 } }),
      reply.text("Your notes say: buy milk.", { usage: { prompt_tokens: 120, completion_tokens: 8 } }),
    );
    const message = new ChannelMessage({ sessionId: "cli:local", channel: "cli", chatId: "local", content: "what do my notes say?", context: { sender_id: "human" } });
    const result = await framework.running(() => framework.processInbound(message));
    return { dir, framework, turnId: String(result.state.turn_id), workspace: resolveWorkspace(dir.path) };
  }

  for (const store of ["file", "sqlite"]) {
    it(`lists the session with its workspace, entries, turns, last activity and size (${store} store)`, async () => {
      const { dir, framework, workspace } = await afterATurn({ BUB_TAPE_STORE: store });
      try {
        const json = output();
        await runTapeList(framework, { json: true }, json);
        const rows = JSON.parse(json.text) as Record<string, unknown>[];
        assert.equal(rows.length, 1);
        const [row] = rows;
        assert.equal(row!.session_id, "cli:local");
        assert.equal(row!.workspace, workspace);
        assert.match(String(row!.tape), /^[0-9a-f]{16}__[0-9a-f]{16}$/);
        assert.equal(row!.turns, 1);
        assert.ok(Number(row!.entries) >= 14, `entries: ${row!.entries}`);
        assert.match(String(row!.last_activity), /^\d{4}-\d{2}-\d{2}T/);
        assert.ok(Number(row!.bytes) > 1000);
        const table = output();
        await runTapeList(framework, {}, table);
        const [header, line] = table.text.trimEnd().split("\n");
        assert.match(header!, /^SESSION +WORKSPACE +ENTRIES +TURNS +LAST ACTIVITY +SIZE$/);
        assert.match(line!, new RegExp(`^cli:local +${workspace.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} +${row!.entries} +1 +\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2} UTC +\\d+(\\.\\d)? KB$`));
      } finally {
        await dir.cleanup();
      }
    });
  }

  it("shows the turn as a transcript, as JSON, and since the last anchor", async () => {
    const { dir, framework, turnId } = await afterATurn();
    try {
      const text = output();
      await runTapeShow(framework, "cli:local", {}, text);
      const lines = text.text.split("\n");
      assert.match(lines[0]!, /^session cli:local · workspace /);
      assert.match(lines[1]!, /^tape [0-9a-f]{16}__[0-9a-f]{16} · \d+ entries · 1 turn$/);
      assert.ok(lines.some((line) => /^Turn 1 · .* · fake:any · 2 model calls · 1 tool call · 220 in \/ 18 out tokens$/.test(line)), text.text);
      assert.ok(lines.includes(`  turn_id ${turnId}`));
      assert.ok(lines.includes("  user         what do my notes say?"));
      assert.ok(lines.includes('  tool call    fs_read {"path":"notes.txt"}'));
      assert.ok(lines.includes("  tool result  fs_read: buy milk"));
      assert.ok(lines.includes("  assistant    Your notes say: buy milk."));

      const json = output();
      await runTapeShow(framework, "cli:local", { json: true }, json);
      const transcript = JSON.parse(json.text) as { session_id: string; turn_count: number; turns: { turn_id: string; usage: unknown; items: { type: string; call_id?: string }[] }[] };
      assert.equal(transcript.session_id, "cli:local");
      assert.equal(transcript.turn_count, 1);
      assert.equal(transcript.turns[0]!.turn_id, turnId);
      assert.deepEqual(transcript.turns[0]!.usage, { prompt_tokens: 220, completion_tokens: 18, total_tokens: 238 });
      assert.deepEqual(
        transcript.turns[0]!.items.filter((item) => item.call_id).map((item) => [item.type, item.call_id]),
        [
          ["tool_call", "call_notes"],
          ["tool_result", "call_notes"],
        ],
      );

      const since = output();
      await runTapeShow(framework, "cli:local", { sinceAnchor: "session/start" }, since);
      assert.ok(since.text.includes("── anchor session/start"));
      await assert.rejects(runTapeShow(framework, "cli:local", { sinceAnchor: "nope" }, output()), /Anchor "nope" was not found/);
      await assert.rejects(runTapeShow(framework, "cli:other", {}, output()), /No tape for session "cli:other"/);
    } finally {
      await dir.cleanup();
    }
  });

  it("exports the tape's own lines as JSONL, or a Markdown transcript", async () => {
    const { dir, framework, turnId } = await afterATurn();
    try {
      const jsonl = output();
      await runTapeExport(framework, "cli:local", { format: "jsonl" }, jsonl);
      const entries = jsonl.text.trimEnd().split("\n").map((line) => JSON.parse(line) as { id: number; meta: Record<string, unknown> });
      assert.deepEqual(entries.map((entry) => entry.id), entries.map((_, index) => index + 1));
      assert.ok(entries.every((entry) => entry.meta.turn_id === turnId));
      assert.deepEqual(Object.keys(entries[0]!), ["id", "kind", "payload", "meta", "date"]);

      const markdown = output();
      await runTapeExport(framework, "cli:local", { format: "markdown" }, markdown);
      assert.match(markdown.text, /^# Session `cli:local`\n/);
      assert.match(markdown.text, /\n## Turn 1\n/);
      assert.match(markdown.text, /\*\*Tool call\*\* `fs_read` \(`call_notes`\)/);
      assert.match(markdown.text, /\*\*Assistant\*\*\n\nYour notes say: buy milk\./);
      await assert.rejects(runTapeExport(framework, "cli:local", { format: "xml" }, output()), /Unknown export format "xml" — use --format jsonl, markdown, atif or cloudevents/);
    } finally {
      await dir.cleanup();
    }
  });

  it("says how to start when there are no tapes, and writes sizes people read", () => {
    assert.match(formatTapeList([]), /^No session tapes yet/);
    assert.deepEqual([0, 1023, 1024, 9_500, 5 * 1024 * 1024, null].map(humanBytes), ["0 B", "1023 B", "1.0 KB", "9.3 KB", "5.0 MB", "-"]);
    const table = formatTapeList([{ session_id: null, workspace: null, tape: "aa__bb", entries: 12_345, turns: 3, last_activity: null, bytes: null }], { home: "/home/me" });
    assert.equal(table.split("\n")[1], "aa__bb   ?           12,345      3  -                 -");
  });
});
