/**
 * The installed package keeping its tapes in PostgreSQL: `bub run` with
 * `BUB_TAPE_STORE=postgres` writes its turn to the database, a second run in the same session
 * sees the first in its context, `bub tape list` finds the session, and a wrong password fails in one line that does not show it.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { usePostgres } from "../support/postgres.ts";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";

const postgres = usePostgres();

describe("tapes in PostgreSQL (installed package)", () => {
  let openai: FakeOpenAI;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let url: string;
  before(async () => {
    [, openai, home] = await Promise.all([installedPackage(), startFakeOpenAI(), tempHome()]);
    url = await (await postgres()).createDatabase("bub_e2e");
  });
  after(async () => {
    await openai.close();
    await home.cleanup();
  });

  it("bub run writes its turn to PostgreSQL and the next run in the session sees it", async () => {
    const env = { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "local:small-model", BUB_LOCAL_API_BASE: openai.url, BUB_TAPE_STORE: "postgres", BUB_DATABASE_URL: url };
    openai.script(reply.text("Nice to meet you, Ada."), reply.text("Your name is Ada."));
    const first = await runBub(["run", "my name is Ada"], { home: home.path, env });
    assert.equal(first.code, 0, first.stderr);
    const second = await runBub(["run", "what is my name?"], { home: home.path, env });
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /Your name is Ada\./);
    const context = JSON.stringify(openai.requests[1]!.body.messages);
    assert.match(context, /my name is Ada/);
    assert.match(context, /Nice to meet you, Ada\./);
    assert.equal(existsSync(join(home.path, ".bub", "tapes")), false, "no tape files");

    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ tape: string; kind: string; content: string | null }>(
        "SELECT tape, kind, payload->>'content' AS content FROM bub_tape_entries ORDER BY tape, id",
      );
      // user messages carry a sender/date header; their last line is what was typed
      const messages = rows.filter((row) => row.kind === "message").map((row) => row.content?.split("\n").at(-1));
      assert.deepEqual(messages, ["my name is Ada", "Nice to meet you, Ada.", "what is my name?", "Your name is Ada."]);
      assert.equal(new Set(rows.filter((row) => row.kind === "message").map((row) => row.tape)).size, 1, "one session tape");
    } finally {
      await client.end();
    }

    // bub tape list reads the name index and stats from PostgreSQL
    const list = await runBub(["tape", "list", "--json"], { home: home.path, env });
    assert.equal(list.code, 0, list.stderr);
    const sessions = JSON.parse(list.stdout) as Record<string, unknown>[];
    assert.deepEqual(sessions.map((row) => [row.session_id, row.turns]), [["cli:local", 2]]);
  });

  it("a wrong password fails in one line that names the server but not the password", async () => {
    const wrong = new URL(url);
    wrong.password = "wrong-password-e2e";
    const env = { BUB_HOME: join(home.path, ".bub"), BUB_MODEL: "local:small-model", BUB_LOCAL_API_BASE: openai.url, BUB_TAPE_STORE: "postgres", BUB_DATABASE_URL: wrong.toString() };
    const result = await runBub(["run", "hello"], { home: home.path, env });
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /^bub: .*PostgreSQL at 127\.0\.0\.1:\d+\/bub_e2e_\w+ refused the tape store/m);
    assert.doesNotMatch(result.stderr + result.stdout, /wrong-password-e2e/);
  });
});
