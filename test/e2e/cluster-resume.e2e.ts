/**
 * Turns that resume (issue 36) on the shared PostgreSQL queue: a gateway is killed with
 * SIGKILL after its turn's first tool call completed; when its job expires another gateway
 * on the queue takes it, resumes the turn from the journal in the shared tape store, and
 * answers without running the tool again (a counter file the tool appends to shows one
 * call). Installed package, embedded PostgreSQL, fake Bot API and model on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { reply, startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from "../support/fake-openai.ts";
import { startFakeTelegram, type FakeTelegram } from "../support/fake-telegram.ts";
import { usePostgres } from "../support/postgres.ts";
import { installedPackage, tempHome } from "./support/installed.ts";
import { pollUntil, readyWithin, startBub, within, type LiveBub } from "./support/live.ts";

const postgres = usePostgres();
const TOKEN = "123456:E2E-CLUSTER-RESUME";
const CHAT = 4242;
const hasToolResult = (request: RecordedRequest): boolean => request.body.messages.some((message) => message.role === "tool");

describe("a queued turn cut off by kill -9 resumes on another gateway (installed package)", () => {
  let openai: FakeOpenAI;
  let telegram: FakeTelegram;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let url: string;
  const gateways: LiveBub[] = [];
  before(async () => {
    [, openai, telegram, home] = await Promise.all([installedPackage(), startFakeOpenAI(), startFakeTelegram({ token: TOKEN }), tempHome()]);
    url = await (await postgres()).createDatabase("bub_cluster_resume");
  });
  after(async () => {
    for (const gateway of gateways) gateway.kill();
    await openai.close();
    await telegram.close();
    await home.cleanup();
  });

  async function start(index: number): Promise<LiveBub> {
    const gateway = await startBub(["gateway"], {
      home: home.path,
      env: {
        // One workspace (tape names derive from it), a BUB_HOME per process.
        BUB_HOME: join(home.path, `.bub-${index}`),
        BUB_MODEL: "local:any",
        BUB_API_BASE: openai.url,
        BUB_TELEGRAM_TOKEN: TOKEN,
        BUB_TELEGRAM_API_ROOT: telegram.apiRoot,
        BUB_TELEGRAM_ALLOW_ALL: "true",
        BUB_TELEGRAM_POLLER_RETRY_SECONDS: "1",
        BUB_DEBOUNCE_SECONDS: "0",
        BUB_TAPE_STORE: "postgres",
        BUB_DATABASE_URL: url,
        BUB_QUEUE_EXPIRE_SECONDS: "6",
        BUB_LOG_LEVEL: "info",
      },
    });
    gateways.push(gateway);
    await readyWithin(
      gateway,
      pollUntil(() => (gateway.stderr().includes("telegram.queue serving bot") ? true : undefined), "the queue", { timeoutMs: 30_000 }),
      30_000,
      `gateway ${index} to work the queue`,
      `bub gateway ${index} exited early`,
    );
    return gateway;
  }

  it("does not run the completed tool call again, answers once, and records the resumption on the shared tape", { timeout: 180_000 }, async () => {
    const counter = join(home.path, "counter.txt");
    const toolCall = reply.toolCalls([{ id: "call_count", name: "bash", arguments: JSON.stringify({ cmd: `echo call >> '${counter}'` }) }]);
    // 1: the tool call; 2: the next step hangs until the kill; 3 (on the other gateway): the
    // answer when the request carries the tool's result, else the tool call again.
    openai.script(toolCall, reply.hang(), (request) => (hasToolResult(request) ? reply.text("counted once") : toolCall));

    const first = await start(1);
    telegram.sendText({ chatId: CHAT, userId: CHAT, text: "count please" });
    await within(openai.waitForRequest(1), 30_000, "the second model call (after the tool ran)");
    assert.equal(await readFile(counter, "utf8"), "call\n", "the tool ran once before the kill");
    const second = await start(2);
    first.child.kill("SIGKILL");
    await first.exited(5_000);

    const [answer] = await within(telegram.waitForCalls("sendMessage", 1), 60_000, "the answer from the other gateway");
    assert.match(String(answer?.payload.text), /counted once/);
    assert.equal(await readFile(counter, "utf8"), "call\n", "the completed tool call was not run again");
    const resumed = openai.requests[2];
    assert.ok(resumed && hasToolResult(resumed), "the resumed step was given the recorded tool result");
    assert.equal(resumed.body.messages.filter((message) => message.role === "user" && JSON.stringify(message.content).includes("count please")).length, 1, "the user's message is in the context once");
    second.kill();
    await second.exited(10_000);
    assert.equal(telegram.succeededOf("sendMessage").length, 1, "one answer");

    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ tape: string; kind: string; name: string | null }>(
        "SELECT tape, kind, payload->>'name' AS name FROM bub_tape_entries WHERE strpos(tape, '__sidecar__') = 0 ORDER BY tape, id",
      );
      const session = rows.filter((row) => rows.some((other) => other.tape === row.tape && other.name === "turn.resumed"));
      assert.equal(session.filter((row) => row.name === "turn.resumed").length, 1, "one resumption on the tape");
      assert.equal(session.filter((row) => row.kind === "tool_result").length, 1, "one tool result");
      assert.equal(session.filter((row) => row.name === "loop.start").length, 1, "the loop started once");
      const journal = await client.query("SELECT 1 FROM bub_tape_entries WHERE right(tape, 15) = '__sidecar__turn'");
      assert.equal(journal.rowCount, 0, "the journal is cleared after the merge");
    } finally {
      await client.end();
    }
  });
});
