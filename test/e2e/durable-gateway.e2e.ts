/**
 * `bub gateway` of the installed binary loses no Telegram message across restarts (1,000
 * messages through three `kill -9` restarts and a SIGTERM under load): what
 * arrives while it is down is answered after it starts, a `kill -9` at a random moment
 * repeats at most the replies it cut between leaving and being confirmed (one per chat, among
 * the last `delivery.concurrency` the killed process sent), a reply recorded before its update was marked done is sent once and
 * its turn not run again, a SIGTERM repeats none, and a SIGTERM with nothing running exits at once. Fake Bot API and fake
 * model on 127.0.0.1; every wait has a deadline.
 */
import assert from "node:assert/strict";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { FAKE_BOT, startFakeTelegram, type FakeTelegram } from "../support/fake-telegram.ts";
import { echoModel } from "./support/echo-model.ts";
import { installedPackage, tempHome } from "./support/installed.ts";

/** What the gateway says for a message two restarts in a row cut off (src/channels/telegram/polling.ts). */
const GIVEN_UP = "Bub restarted twice while working on your message, so it was not answered. Please send it again.";
import { pollUntil, readTapes, readyWithin, startBub, within, type LiveBub } from "./support/live.ts";

/**
 * A journal compacted with nothing open: its one `mark` line's highest id and the ids it
 * remembers (runs of `[arrival time, id, ...]`), sorted; fails on any other line.
 */
function compacted(journal: string): { last: unknown; seen: number[] } {
  const lines = journal.trim().split("\n").map((line) => JSON.parse(line) as { t: string; last?: number; seen?: number[][] });
  assert.equal(lines.length, 1, `one line: ${journal.slice(0, 500)}`);
  const [mark] = lines;
  assert.equal(mark?.t, "mark");
  return { last: mark?.last, seen: (mark?.seen ?? []).flatMap((run) => run.slice(1)).sort((a, b) => a - b) };
}

const TOKEN = "123456:E2E-DURABLE";
/** Each message comes from its own private chat (its own session), `text` `msg-<n>`. */
const FIRST_CHAT = 1000;
/** `delivery.concurrency` of these gateways: sends in flight at once, each to another chat. */
const SENDS_IN_FLIGHT = 4;

/** The model answers `re: msg-<n>` to the latest message it was given. */
const model = echoModel(/msg-\d+/, { delayMs: 20 });

describe("bub gateway keeps Telegram messages across restarts (installed package)", () => {
  let openai: FakeOpenAI;
  let telegram: FakeTelegram;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let bubHome: string;
  let live: LiveBub | null = null;
  before(async () => {
    await installedPackage();
    openai = await startFakeOpenAI();
  });
  after(() => openai.close());
  beforeEach(async () => {
    openai.requests.length = 0;
    model.hangs = 0;
    openai.script(...Array.from({ length: 3000 }, () => model.answer));
    telegram = await startFakeTelegram({ token: TOKEN });
    home = await tempHome();
    bubHome = join(home.path, ".bub");
  });
  afterEach(async () => {
    live?.kill();
    live = null;
    await telegram.close();
    await home.cleanup();
  });

  /** Starts the gateway; resolves once it polls (its first getUpdates after deleteWebhook). */
  async function start(): Promise<LiveBub> {
    const polled = telegram.callsOf("deleteWebhook").length;
    live = await startBub(["gateway"], {
      home: home.path,
      env: {
        BUB_HOME: bubHome,
        BUB_MODEL: "local:any",
        BUB_API_BASE: openai.url,
        BUB_TELEGRAM_TOKEN: TOKEN,
        BUB_TELEGRAM_API_ROOT: telegram.apiRoot,
        BUB_TELEGRAM_ALLOW_ALL: "true",
        BUB_DEBOUNCE_SECONDS: "0",
        BUB_DELIVERY_CONCURRENCY: String(SENDS_IN_FLIGHT),
      },
    });
    const started = live;
    await readyWithin(started, telegram.waitForCalls("deleteWebhook", polled + 1), 20_000, "the gateway to start polling", "bub gateway exited before it polled");
    return started;
  }

  function send(n: number): void {
    telegram.sendText({ chatId: FIRST_CHAT + n, userId: FIRST_CHAT + n, text: `msg-${n}` });
  }

  /** Replies Telegram accepted, by message number. */
  function answers(): Map<number, number> {
    const counts = new Map<number, number>();
    for (const call of telegram.succeededOf("sendMessage")) {
      const n = Number(call.payload.chat_id) - FIRST_CHAT;
      // A message whose turn two restarts cut off is answered with GIVEN_UP (ask again).
      if (call.payload.text !== GIVEN_UP) assert.equal(call.payload.text, `re: msg-${n}`, `chat ${String(call.payload.chat_id)} got the reply to its own message`);
      counts.set(n, (counts.get(n) ?? 0) + 1);
    }
    return counts;
  }

  async function allAnswered(count: number, timeoutMs: number): Promise<Map<number, number>> {
    return pollUntil(() => (answers().size >= count ? answers() : undefined), `replies to all ${count} messages`, { timeoutMs, intervalMs: 50 }).catch((error: Error) => {
      const missing = Array.from({ length: count }, (_, n) => n).filter((n) => !answers().has(n));
      throw new Error(`${error.message}: ${answers().size} answered, missing ${missing.slice(0, 20).join(",")}\nstderr:\n${live?.stderr().slice(-3000) ?? ""}`);
    });
  }

  async function sigterm(gateway: LiveBub, timeoutMs = 15_000): Promise<number> {
    const sent = performance.now();
    gateway.child.kill("SIGTERM");
    const result = await gateway.exited(timeoutMs);
    assert.equal(result.code, 0, `exit ${result.code} ${result.signal}\nstderr:\n${result.stderr}`);
    return performance.now() - sent;
  }

  it("answers every message that arrived while it was down (none dropped), then compacts its journal at the next start", async () => {
    for (let n = 0; n < 20; n++) send(n);
    let gateway = await start();
    const counts = await allAnswered(20, 30_000);
    assert.deepEqual([...counts.values()].filter((count) => count !== 1), [], "one reply each");
    await sigterm(gateway);
    const path = join(bubHome, "inbound", `telegram-${FAKE_BOT.id}.jsonl`);
    const records = (await readFile(path, "utf8")).trim().split("\n").map((line) => JSON.parse(line) as { t: string; id?: number });
    const ids = (kind: string) => records.filter((record) => record.t === kind).map((record) => record.id).sort((a, b) => a! - b!);
    assert.deepEqual(ids("done"), ids("received"), "every update received is done");
    assert.equal(ids("received").length, 20);
    gateway = await start();
    await sigterm(gateway);
    assert.deepEqual(compacted(await readFile(path, "utf8")), { last: 20, seen: Array.from({ length: 20 }, (_, index) => index + 1) }, "compacted to its mark when opened");
  });

  it("answers all of 1,000 messages across 3 kill -9 restarts at random moments and a SIGTERM under load: at most the replies in flight repeated per kill -9, none across the SIGTERM", async (t) => {
    const total = 1000;
    const kills = 3;
    /** Messages pushed per run while the gateway works (the rest arrive while it is down, or at the end). */
    const batch = 200;
    const whileDown = 5;
    let gateway = await start();
    let next = 0;
    const feed = (count: number) => {
      for (const end = Math.min(total, next + count); next < end; next++) send(next);
    };
    /** Each restart: how it was stopped and where its run's replies begin in the list of sent replies. */
    const restarts: { how: "kill -9" | "SIGTERM"; firstReply: number; stoppedAfter: number }[] = [];
    let inFlightAtSigterm = 0;
    const stopAtRandom = async (how: "kill -9" | "SIGTERM") => {
      // What the last stop cut off is answered first (so its retry is not cut off again)...
      await allAnswered(next, 60_000);
      // ...then a random moment while this run works through a new batch: after a random
      // number of its replies (1 to batch - 1), so turns are running, some replied, some not.
      const replied = telegram.succeededOf("sendMessage").length;
      const stopAfter = 1 + Math.floor(Math.random() * (batch - 1));
      feed(batch);
      await within(telegram.waitForCalls("sendMessage", replied + stopAfter), 60_000, `${stopAfter} replies from this run`);
      // Not always right as a reply arrives (inside the window a kill -9 repeats a reply).
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 100));
      if (how === "kill -9") {
        gateway.child.kill("SIGKILL");
        await gateway.exited(5_000);
      } else {
        inFlightAtSigterm = next - answers().size;
        await sigterm(gateway);
      }
      feed(whileDown);
      const firstReply = telegram.succeededOf("sendMessage").length;
      gateway = await start();
      restarts.push({ how, firstReply, stoppedAfter: stopAfter });
    };
    for (let kill = 0; kill < kills; kill++) await stopAtRandom("kill -9");
    await stopAtRandom("SIGTERM");
    feed(total);
    const counts = await allAnswered(total, 120_000);
    // Let any late repeat arrive before counting.
    await new Promise((resolve) => setTimeout(resolve, 500));

    // Every reply, in the order Telegram accepted them; a repeat is a second reply to a message.
    const sent = telegram.succeededOf("sendMessage").map((call) => Number(call.payload.chat_id) - FIRST_CHAT);
    const seen = new Set<number>();
    const repeatsInRun = new Array<number>(restarts.length + 1).fill(0);
    /** Repeats of another reply than those the stopped process was sending when it stopped. */
    const notInFlight: string[] = [];
    sent.forEach((n, index) => {
      const run = restarts.filter((restart) => restart.firstReply <= index).length;
      if (seen.has(n)) {
        repeatsInRun[run]!++;
        // At most SENDS_IN_FLIGHT sends are in flight (one per chat), each confirmed as soon as
        // Telegram answers: only the last ones the stopped process sent can have left unconfirmed.
        const stopped = run > 0 ? restarts[run - 1] : undefined;
        const inFlight = stopped ? sent.slice(Math.max(0, stopped.firstReply - SENDS_IN_FLIGHT), stopped.firstReply) : [];
        if (!inFlight.includes(n)) notInFlight.push(`msg-${n} after stop #${run} (the replies in flight were to ${inFlight.map((m) => `msg-${m}`).join(", ") || "none"})`);
      }
      seen.add(n);
    });
    const givenUp = telegram.succeededOf("sendMessage").filter((call) => call.payload.text === GIVEN_UP).length;
    t.diagnostic(`stops: ${restarts.map((restart) => `${restart.how} after ${restart.stoppedAfter} replies`).join(", ")}; unanswered at the SIGTERM: ${inFlightAtSigterm}; repeated replies per run: ${repeatsInRun.join(", ")}; given up: ${givenUp}`);
    assert.equal(next, total, "all messages were sent");
    assert.equal(counts.size, total, "every message answered");
    assert.equal(givenUp, 0, "no message was cut off twice");
    assert.equal(repeatsInRun[0], 0, "the first run repeats nothing");
    assert.deepEqual(notInFlight, [], "a repeated reply is only ever the one being sent at the kill");
    restarts.forEach((restart, index) => {
      const limit = restart.how === "kill -9" ? SENDS_IN_FLIGHT : 0;
      assert.ok(repeatsInRun[index + 1]! <= limit, `after ${restart.how} #${index + 1}: ${repeatsInRun[index + 1]} repeated replies (at most ${limit})`);
    });
    // None lost on the way either: every update went through the journal, which is now
    // compacted to the mark of the last one.
    const idleExit = await sigterm(gateway, 5_000);
    assert.ok(idleExit < 1_000, `with nothing running it exited ${Math.round(idleExit)} ms after SIGTERM`);
    const journal = await readFile(join(bubHome, "inbound", `telegram-${FAKE_BOT.id}.jsonl`), "utf8");
    assert.deepEqual(compacted(journal), { last: total, seen: Array.from({ length: total }, (_, index) => index + 1) }, "everything done: compacted to its mark");
    // A SIGTERM restart with nothing pending answers nothing again.
    const beforeRestart = telegram.succeededOf("sendMessage").length;
    gateway = await start();
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(telegram.succeededOf("sendMessage").length, beforeRestart, "nothing answered again after a SIGTERM restart");
    await sigterm(gateway);
  });

  it("sends a reply recorded before a kill -9 marked its update done once, and does not run its turn again, though the reply leaves before the journal is resumed", async () => {
    // What a kill -9 between the two steps leaves: the update received and started in the
    // journal, its reply recorded in the delivery ledger (by the installed package's store).
    const update = { update_id: 1, message: { message_id: 1, date: Math.floor(Date.now() / 1000), chat: { id: FIRST_CHAT, type: "private" }, from: { id: FIRST_CHAT, is_bot: false, first_name: "User", username: `user${FIRST_CHAT}` }, text: "msg-0" } };
    await mkdir(join(bubHome, "inbound"), { recursive: true });
    const journalPath = join(bubHome, "inbound", `telegram-${FAKE_BOT.id}.jsonl`);
    await writeFile(journalPath, `${JSON.stringify({ t: "received", id: 1, at: Math.floor(Date.now() / 1000), item: update })}\n${JSON.stringify({ t: "started", id: 1 })}\n`);
    const { prefix } = await installedPackage();
    const storeModule = pathToFileURL(join(prefix, "node_modules", "bub-ts", "dist", "channels", "delivery", "sqlite-store.js")).href;
    const { openSqliteDeliveryStore } = (await import(storeModule)) as typeof import("../../src/channels/delivery/sqlite-store.ts");
    const store = openSqliteDeliveryStore(join(bubHome, "delivery.sqlite3"));
    await store.record("killed-gateway", [{ source: `telegram-${FAKE_BOT.id}`, chatId: String(FIRST_CHAT), sessionId: `telegram:${FIRST_CHAT}`, text: "re: msg-0", inbound: [1] }]);
    await store.close();
    // The journal is resumed after deleteWebhook; asked to wait a second, the gateway has sent
    // the recorded reply (and forgotten it) by then.
    telegram.fail("deleteWebhook", { status: 429, retryAfter: 1 });
    const gateway = await start();
    await within(telegram.waitForCalls("sendMessage", 1), 15_000, "the recorded reply");
    await pollUntil(async () => ((await readFile(journalPath, "utf8")).includes(JSON.stringify({ t: "done", id: 1 })) ? true : undefined), "update 1 marked done", { timeoutMs: 15_000, intervalMs: 50 });
    // A SIGTERM lets a turn that runs finish and sends what it recorded.
    await sigterm(gateway);
    assert.deepEqual(telegram.succeededOf("sendMessage").map((call) => call.payload.text), ["re: msg-0"], "sent once");
    assert.equal(openai.requests.length, 0, "the turn was not run again");
  });

  it("retries a turn a kill -9 cut off once, marked retried_after_restart on the tape", async () => {
    model.hangs = 1;
    let gateway = await start();
    send(0);
    await within(openai.waitForRequest(0), 15_000, "the model call that hangs");
    gateway.child.kill("SIGKILL");
    await gateway.exited(5_000);
    gateway = await start();
    const counts = await allAnswered(1, 15_000);
    assert.equal(counts.get(0), 1);
    assert.equal(openai.requests.length, 2, "the turn ran again once");
    assert.match(JSON.stringify(openai.requests[1]!.body.messages), /retried_after_restart=true/);
    assert.doesNotMatch(JSON.stringify(openai.requests[0]!.body.messages), /retried_after_restart/);
    const entries = [...(await readTapes(bubHome)).values()].flat();
    assert.ok(entries.some((entry) => JSON.stringify(entry.payload).includes("retried_after_restart=true")), "the retry is on the tape");
    await sigterm(gateway);
  });

  it("does not run a turn a third time when its retry was cut off too: the chat is asked to send it again", async () => {
    model.hangs = 2;
    let gateway = await start();
    send(0);
    for (let run = 0; run < 2; run++) {
      await within(openai.waitForRequest(run), 15_000, `model call ${run + 1} (hangs)`);
      gateway.child.kill("SIGKILL");
      await gateway.exited(5_000);
      gateway = await start();
    }
    const [notice] = await within(telegram.waitForCalls("sendMessage", 1), 15_000, "the notice");
    assert.equal(notice!.payload.text, GIVEN_UP);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(openai.requests.length, 2, "no third run");
    assert.equal(telegram.callsOf("sendMessage").length, 1);
    await sigterm(gateway);
  });

  it("lets a running turn finish on SIGTERM and repeats no reply after the restart", async () => {
    let gateway = await start();
    for (let n = 0; n < 10; n++) send(n);
    await within(openai.waitForRequest(0), 15_000, "a model call");
    await sigterm(gateway);
    gateway = await start();
    const counts = await allAnswered(10, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual([...answers().values()].filter((count) => count !== 1), [], `one reply each: ${JSON.stringify([...counts])}`);
    await sigterm(gateway);
  });

  it("exits within 1 s of a SIGTERM when no turn is running: idle since start, and after answering", async () => {
    const idle = await start();
    const idleMs = await sigterm(idle, 5_000);
    assert.ok(idleMs < 1_000, `idle since start: exited ${Math.round(idleMs)} ms after SIGTERM`);
    const gateway = await start();
    send(0);
    await allAnswered(1, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const ms = await sigterm(gateway, 5_000);
    assert.ok(ms < 1_000, `exited ${Math.round(ms)} ms after SIGTERM`);
  });
});
