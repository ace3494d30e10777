/**
 * The tape a `bub run` writes, with each entry encoded once (in the turn's fork) and handed to
 * the store at merge as it is: on the installed binary, with the file store and with SQLite,
 * a turn whose prompt and tool result hold the configured API key. Each JSONL line is the
 * reference format exactly (what `JSON.stringify` of the parsed line gives), each SQLite row's
 * payload and meta are that JSON too, ids run 1, 2, 3, ..., and the key is redacted everywhere.
 */
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, before, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";

const API_KEY = "sk-e2e-encode-once-0123456789";

describe("tape entries encoded once (installed package)", () => {
  let openai: FakeOpenAI;
  before(async () => {
    await installedPackage();
    openai = await startFakeOpenAI();
  });
  after(() => openai.close());

  /** Runs one turn with a tool call in a fresh home; answers the home and the env used. */
  async function turn(store: string): Promise<{ home: Awaited<ReturnType<typeof tempHome>>; env: Record<string, string> }> {
    const home = await tempHome();
    const env = { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "local:small-model", BUB_LOCAL_API_BASE: openai.url, BUB_API_KEY: API_KEY, BUB_TAPE_STORE: store };
    await writeFile(join(home.path, "notes.txt"), `the key is ${API_KEY}\n`);
    openai.script(
      reply.toolCalls([{ id: "call_notes", name: "fs_read", arguments: '{"path":"notes.txt"}' }]),
      reply.text("The notes hold a key ü."),
    );
    const run = await runBub(["run", `remember ${API_KEY} and read my notes`], { home: home.path, env });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /The notes hold a key ü\./);
    return { home, env };
  }

  it("file store: every line is the reference encoding, ids in order, the key redacted", async () => {
    const { home, env } = await turn("file");
    try {
      const listed = await runBub(["tape", "list", "--json"], { home: home.path, env });
      const [row] = JSON.parse(listed.stdout) as { tape: string }[];
      assert.ok(row, listed.stdout);
      const text = await readFile(join(env.BUB_HOME, "tapes", `${row.tape}.jsonl`), "utf8");
      assert.ok(!text.includes(API_KEY), "the key reached the tape file");
      const lines = text.trimEnd().split("\n");
      const parsed = lines.map((line) => JSON.parse(line) as { id: number; kind: string; payload: Record<string, unknown> });
      lines.forEach((line, index) => assert.equal(line, JSON.stringify(parsed[index]), "a line is not the reference encoding"));
      assert.deepEqual(
        parsed.map((entry) => entry.id),
        parsed.map((_, index) => index + 1),
      );
      const redacted = parsed.filter((entry) => JSON.stringify(entry.payload).includes("[redacted:"));
      for (const kind of ["message", "tool_result"]) assert.ok(redacted.some((entry) => entry.kind === kind), `no redacted ${kind}: ${text}`);
      assert.ok(parsed.some((entry) => entry.kind === "message" && entry.payload.content === "The notes hold a key ü."));
    } finally {
      await home.cleanup();
    }
  });

  it("SQLite store: each row's payload and meta are the entry's JSON, ids in order, the key redacted", async () => {
    const { home, env } = await turn("sqlite");
    try {
      const database = new DatabaseSync(join(env.BUB_HOME, "tapes.sqlite3"), { readOnly: true });
      try {
        const rows = database.prepare("SELECT id, kind, payload, meta FROM tape_entries ORDER BY id").all();
        assert.ok(rows.length >= 8, `${rows.length} rows`);
        assert.deepEqual(
          rows.map((row) => row.id),
          rows.map((_, index) => index + 1),
        );
        for (const row of rows) {
          for (const column of [row.payload, row.meta]) {
            assert.equal(typeof column, "string");
            assert.equal(column, JSON.stringify(JSON.parse(String(column))));
            assert.ok(!String(column).includes(API_KEY), "the key reached the database");
          }
        }
        const redacted = rows.filter((row) => String(row.payload).includes("[redacted:")).map((row) => row.kind);
        for (const kind of ["message", "tool_result"]) assert.ok(redacted.includes(kind), `no redacted ${kind}`);
      } finally {
        database.close();
      }
      const shown = await runBub(["tape", "show", "cli:local"], { home: home.path, env });
      assert.equal(shown.code, 0, shown.stderr);
      assert.match(shown.stdout, /assistant +The notes hold a key ü\./);
    } finally {
      await home.cleanup();
    }
  });
});
