/**
 * Three `bub gateway` processes of the installed binary on one PostgreSQL serve one Telegram
 * bot (the shared inbound queue, src/channels/cluster/): many chats send bursts of messages, one
 * process is killed with SIGKILL in the middle (with a turn of it hanging), and still every
 * message is answered, in order per chat, with no reply repeated beyond the bound of the
 * promise: only a reply being sent at the kill may go out again, at most one per turn then
 * running in the killed process (here at most BUB_MAX_CONCURRENT_TURNS = 4); each chat's
 * tape continues whichever process runs its next turn. Then a database left by the pg-boss
 * engine, with messages still waiting, is taken over by a gateway on graphile-worker, which
 * answers them in order. Fake Bot API and fake model on 127.0.0.1; every wait has a deadline.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { FAKE_BOT, startFakeTelegram, type FakeTelegram } from "../support/fake-telegram.ts";
import { usePostgres } from "../support/postgres.ts";
import { echoModel } from "./support/echo-model.ts";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";
import { pollUntil, readyWithin, startBub, within, type LiveBub } from "./support/live.ts";

const postgres = usePostgres();
const TOKEN = "123456:E2E-CLUSTER";
const CHATS = 12;
const PER_CHAT = 8;
const FIRST_CHAT = 5000;
/** Turns each gateway runs at once: the most replies a kill -9 may leave to be sent again. */
const TURNS_AT_ONCE = 4;

/** The model answers `re: msg-<chat>-<n>` to the latest message it was given; `hangs` cuts a turn off for a kill. */
const model = echoModel(/msg-\d+-\d+/, { delayMs: 20 });

describe("several bub gateway processes on one PostgreSQL serve one bot (installed package)", () => {
  let openai: FakeOpenAI;
  let telegram: FakeTelegram;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let url: string;
  const gateways: LiveBub[] = [];
  before(async () => {
    [, openai, telegram, home] = await Promise.all([installedPackage(), startFakeOpenAI(), startFakeTelegram({ token: TOKEN }), tempHome()]);
    url = await (await postgres()).createDatabase("bub_cluster");
    openai.script(...Array.from({ length: 2000 }, () => model.answer));
  });
  after(async () => {
    for (const gateway of gateways) gateway.kill();
    await openai.close();
    await telegram.close();
    await home.cleanup();
  });

  function env(index: number): Record<string, string> {
    return {
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
      BUB_QUEUE_HEARTBEAT_SECONDS: "10",
      BUB_MAX_CONCURRENT_TURNS: String(TURNS_AT_ONCE),
      BUB_LOG_LEVEL: "info",
    };
  }

  async function start(index: number, extra: Record<string, string> = {}): Promise<LiveBub> {
    const gateway = await startBub(["gateway"], { home: home.path, env: { ...env(index), ...extra } });
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

  function send(chat: number, n: number): void {
    telegram.sendText({ chatId: FIRST_CHAT + chat, userId: FIRST_CHAT + chat, text: `msg-${chat}-${n}` });
  }

  /** Per chat, the numbers of the messages answered, in the order the replies arrived (repeats included). */
  function answers(): Map<number, number[]> {
    const byChat = new Map<number, number[]>();
    for (const call of telegram.succeededOf("sendMessage")) {
      const chat = Number(call.payload.chat_id) - FIRST_CHAT;
      const match = /^re: msg-(\d+)-(\d+)$/.exec(String(call.payload.text));
      assert.ok(match, `an answer, not ${String(call.payload.text)}`);
      assert.equal(Number(match[1]), chat, "each chat gets the replies to its own messages");
      byChat.set(chat, [...(byChat.get(chat) ?? []), Number(match[2])]);
    }
    return byChat;
  }

  const answeredCount = () => [...answers().values()].reduce((sum, numbers) => sum + new Set(numbers).size, 0);

  it("answers every message once and in order per chat, with the tapes shared, through a kill -9 of one process mid-turn", { timeout: 300_000 }, async () => {
    await start(0);
    await start(1);
    await start(2);
    const firstHalf = Math.floor(PER_CHAT / 2);
    for (let n = 0; n < firstHalf; n++) for (let chat = 0; chat < CHATS; chat++) send(chat, n);
    await pollUntil(() => (answeredCount() >= (CHATS * firstHalf) / 2 ? true : undefined), "half of the first messages answered", { timeoutMs: 60_000, intervalMs: 50 });
    // The next model call hangs: the turn waiting for it is running when its process is killed.
    const requested = openai.requests.length;
    model.hangs = 1;
    for (let n = firstHalf; n < PER_CHAT; n++) for (let chat = 0; chat < CHATS; chat++) send(chat, n);
    await within(openai.waitForRequest(requested), 30_000, "a model call to hang");
    const victim = gateways[0];
    assert.ok(victim);
    victim.child.kill("SIGKILL");
    await victim.exited(5_000);
    const total = CHATS * PER_CHAT;
    await pollUntil(() => (answeredCount() >= total ? true : undefined), `all ${total} messages answered`, { timeoutMs: 120_000, intervalMs: 100 }).catch((error: Error) => {
      throw new Error(`${error.message}: ${answeredCount()} answered\n${gateways.map((gateway, index) => `gateway ${index}:\n${gateway.stderr().slice(-2500)}`).join("\n")}`);
    });
    // Let a late repeat arrive before counting.
    await new Promise((resolve) => setTimeout(resolve, 500));

    let repeats = 0;
    for (let chat = 0; chat < CHATS; chat++) {
      const numbers = answers().get(chat) ?? [];
      const firsts = numbers.filter((n, index) => numbers.indexOf(n) === index);
      assert.deepEqual(firsts, Array.from({ length: PER_CHAT }, (_, n) => n), `chat ${chat}: every message answered, in order`);
      // One turn per chat runs at a time: a chat can have at most one reply cut off by the kill.
      assert.ok(numbers.length - firsts.length <= 1, `chat ${chat}: ${numbers.length - firsts.length} replies repeated, at most the one of its turn then running`);
      repeats += numbers.length - firsts.length;
    }
    assert.ok(repeats <= TURNS_AT_ONCE, `${repeats} replies repeated (at most one per turn running in the killed process, ${TURNS_AT_ONCE})`);
    // Shared sessions: each turn's model call saw the chat's previous message, whichever process ran it.
    for (const request of openai.requests) {
      const match = /^msg-(\d+)-(\d+)$/.exec(model.latest(request));
      if (!match || Number(match[2]) === 0) continue;
      assert.ok(JSON.stringify(request.body.messages).includes(`msg-${match[1]}-${Number(match[2]) - 1}`), `the turn for ${match[0]} saw the message before it`);
    }
    // The survivors shared the work, and one of them ran the turn the kill cut off, marked as a retry.
    const served = gateways.slice(1).filter((gateway) => /session\.message received active/.test(gateway.stderr()));
    assert.equal(served.length, 2, "both survivors ran turns");
    assert.ok(openai.requests.some((request) => JSON.stringify(request.body.messages).includes("retried_after_restart=true")), "the cut-off turn ran again, marked");
    // Nothing left in the queue, nothing in the dead letters.
    const listed = await runBub(["queue", "list", "--json"], { home: home.path, env: env(1) });
    assert.equal(listed.code, 0, listed.stderr);
    const report: unknown = JSON.parse(listed.stdout);
    assert.deepEqual(report, { queues: [{ queue: `bub_inbound_telegram_${FAKE_BOT.id}`, queued: 0, active: 0, dead_letters: 0 }], dead_letters: [] });
    // The ledger's keys are the replies' only record: one per message answered (the retry's
    // copy of a reply handed over already was dropped by its key), and no table of the queue's own.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const keys = await client.query<{ key: string }>("SELECT key FROM bub_delivery_keys");
      assert.equal(keys.rows.length, total, "one key per reply");
      assert.ok(keys.rows.every((row) => /^telegram:\d+:\d+#0$/.test(row.key)), "keyed by message and reply index");
      const table = await client.query<{ replies: string | null }>("SELECT to_regclass('bub_queue_replies')::text AS replies");
      assert.equal(table.rows[0]?.replies, null);
      // Each of the survivors' connections says what it is for (docs/deploy.md, "Connections").
      const named = await client.query<{ name: string }>(
        "SELECT DISTINCT application_name AS name FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()",
      );
      const names = new Set(named.rows.map((row) => row.name.replace(/^bub-worker:.*/, "bub-worker:<pool>")));
      for (const name of ["bub tapes", "bub queue", "bub delivery", "bub poller", "bub-worker:<pool>"]) assert.ok(names.has(name), `a connection named ${name} (${[...names].join(", ")})`);
      assert.ok(!names.has("bub") && !names.has(""), `no unnamed connection (${[...names].join(", ")})`);
    } finally {
      await client.end();
    }
    // SIGTERM: the survivors stop taking messages and exit cleanly.
    for (const gateway of gateways.slice(1)) {
      gateway.child.kill("SIGTERM");
      const result = await gateway.exited(15_000);
      assert.equal(result.code, 0, `exit ${result.code} ${result.signal}\nstderr:\n${result.stderr.slice(-2000)}`);
    }
  });

  it("moves what a pg-boss queue still holds into graphile-worker: a gateway of the new engine answers it, in order", { timeout: 180_000 }, async () => {
    // The gateways of the first test poll the same bot: none may be left to take these messages.
    for (const gateway of gateways) gateway.kill();
    const oldUrl = await (await postgres()).createDatabase("bub_migrate");
    const chat = 100;
    const old = await start(3, { BUB_DATABASE_URL: oldUrl, BUB_QUEUE_ENGINE: "pg-boss" });
    // The first message's turn hangs; the two after it wait in pg-boss's queue.
    const requested = openai.requests.length;
    model.hangs = 1;
    for (let n = 0; n < 3; n++) send(chat, n);
    await within(openai.waitForRequest(requested), 30_000, "the first turn to start");
    old.child.kill("SIGKILL");
    await old.exited(5_000);
    const next = await start(4, { BUB_DATABASE_URL: oldUrl, BUB_QUEUE_ENGINE: "graphile" });
    assert.match(next.stderr(), /queue\.migrate moved 3 message\(s\) from the pg-boss queue/);
    await pollUntil(() => (new Set(answers().get(chat)).size === 3 ? true : undefined), "the three moved messages answered", { timeoutMs: 60_000, intervalMs: 100 }).catch((error: Error) => {
      throw new Error(`${error.message}\n${next.stderr().slice(-3000)}`);
    });
    assert.deepEqual(answers().get(chat), [0, 1, 2]);
    const listed = await runBub(["queue", "list", "--json"], { home: home.path, env: { ...env(4), BUB_DATABASE_URL: oldUrl } });
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(JSON.parse(listed.stdout), { queues: [{ queue: `bub_inbound_telegram_${FAKE_BOT.id}`, queued: 0, active: 0, dead_letters: 0 }], dead_letters: [] });
    next.child.kill("SIGTERM");
    assert.equal((await next.exited(15_000)).code, 0);
  });
});
