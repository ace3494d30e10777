/**
 * `bub gateway` of the installed binary serving Telegram against a fake Bot API, with the
 * model behind a fake OpenAI-compatible server, both on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";
import { reply, startFakeOpenAI, type FakeOpenAI } from "../support/fake-openai.ts";
import { startFakeTelegram, type FakeTelegram } from "../support/fake-telegram.ts";
import { installedPackage, runBub, tempHome } from "./support/installed.ts";
import { onlyTape, startBub, within, type LiveBub } from "./support/live.ts";

const TOKEN = "123456:E2E-TOKEN";
const ALICE = 7;

describe("bub gateway with Telegram (installed package, fake Bot API)", () => {
  let openai: FakeOpenAI;
  let telegram: FakeTelegram;
  let home: Awaited<ReturnType<typeof tempHome>>;
  let bubHome: string;
  let gateway: LiveBub | null = null;
  before(async () => {
    await installedPackage();
    openai = await startFakeOpenAI();
  });
  after(() => openai.close());
  beforeEach(async () => {
    openai.requests.length = 0;
    telegram = await startFakeTelegram({ token: TOKEN });
    home = await tempHome();
    bubHome = join(home.path, ".bub");
  });
  afterEach(async () => {
    gateway?.kill();
    gateway = null;
    await telegram.close();
    await home.cleanup();
    assert.equal(openai.pending(), 0, "every scripted reply was used");
  });

  function env(extra: Record<string, string> = {}): Record<string, string> {
    return {
      BUB_HOME: bubHome,
      BUB_MODEL: "local:any",
      BUB_API_BASE: openai.url,
      BUB_TELEGRAM_TOKEN: TOKEN,
      BUB_TELEGRAM_API_ROOT: telegram.apiRoot,
      BUB_TELEGRAM_ALLOW_USERS: String(ALICE),
      BUB_DEBOUNCE_SECONDS: "0",
      ...extra,
    };
  }

  /** Starts the gateway and resolves once the bot has dropped its backlog and polls. */
  async function startGateway(extra: Record<string, string> = {}): Promise<LiveBub> {
    gateway = await startBub(["gateway"], { home: home.path, env: env(extra) });
    const started = gateway;
    const exitedEarly = started.closed.then((result) => {
      throw new Error(`bub gateway exited before it polled (${result.code})\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
    });
    exitedEarly.catch(() => {});
    await within(Promise.race([telegram.waitForCalls("deleteWebhook", 1), exitedEarly]), 15_000, "the bot to start polling");
    return started;
  }

  async function stop(live: LiveBub): Promise<void> {
    live.child.kill("SIGTERM");
    const result = await live.exited(5_000);
    assert.equal(result.signal, null, `bub gateway died of ${result.signal}\n${result.stderr}`);
    assert.equal(result.code, 0, `exit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
  }

  it("answers a private message with the model's reply, then exits 0 on SIGTERM", async () => {
    openai.script(reply.text("Pong from the model."));
    const live = await startGateway();
    telegram.sendText({ chatId: ALICE, userId: ALICE, text: "ping" });
    const [sent] = await within(telegram.waitForCalls("sendMessage", 1), 15_000, "the reply at sendMessage");
    assert.equal(String(sent!.payload.chat_id), String(ALICE));
    assert.equal(sent!.payload.text, "Pong from the model.");
    assert.equal(openai.requests.length, 1);
    const user = openai.requests[0]!.body.messages.filter((message) => message.role === "user").at(-1);
    assert.match(String(user?.content), /ping/);
    await stop(live);
    const entries = await onlyTape(bubHome);
    assert.ok(entries.some((entry) => entry.kind === "message" && entry.payload.role === "assistant" && entry.payload.content === "Pong from the model."), "the answer is on the tape");
    assert.equal(telegram.callsOf("sendMessage").length, 1, "one reply, no error message");
  });

  it("finishes the turn in flight when SIGTERM arrives, delivers its reply, and exits 0", async () => {
    openai.script(reply.text("Late but delivered.", { delayMs: 400 }));
    const live = await startGateway();
    telegram.sendText({ chatId: ALICE, userId: ALICE, text: "take your time" });
    await within(openai.waitForRequest(0), 15_000, "the model call");
    live.child.kill("SIGTERM");
    const result = await live.exited(8_000);
    assert.equal(result.code, 0, `exit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
    assert.deepEqual(
      telegram.callsOf("sendMessage").map((call) => call.payload.text),
      ["Late but delivered."],
    );
  });

  it("refuses a user outside BUB_TELEGRAM_ALLOW_USERS without calling the model", async () => {
    const live = await startGateway();
    telegram.sendText({ chatId: 99, userId: 99, text: "let me in" });
    const [sent] = await within(telegram.waitForCalls("sendMessage", 1), 15_000, "the refusal at sendMessage");
    assert.equal(String(sent!.payload.chat_id), "99");
    assert.equal(sent!.payload.text, "Access denied.");
    await stop(live);
    assert.equal(openai.requests.length, 0);
  });

  it("records a failed turn in <BUB_HOME>/logs/bub.log with its time and session id", async () => {
    openai.script(reply.error(401, "Incorrect API key provided"));
    const live = await startGateway({ BUB_API_KEY: "sk-gateway-log-key" });
    telegram.sendText({ chatId: ALICE, userId: ALICE, text: "hello?" });
    const [sent] = await within(telegram.waitForCalls("sendMessage", 1), 15_000, "the error at sendMessage");
    assert.match(String(sent!.payload.text), /Incorrect API key provided/);
    await stop(live);
    const log = await readFile(join(bubHome, "logs", "bub.log"), "utf8");
    assert.match(log, new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z ERROR \\S+ turn\\.error stage=run_model session_id=telegram:${ALICE} turn_id=[0-9a-f-]{36}: .*HTTP 401`, "m"));
    assert.doesNotMatch(log, /sk-gateway-log-key/);
  });

  it("exits 1 saying what to set when no allowlist is configured", async () => {
    const result = await runBub(["gateway"], { home: home.path, env: env({ BUB_TELEGRAM_ALLOW_USERS: "" }), timeoutMs: 15_000 });
    assert.equal(result.code, 1, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
    assert.match(result.stderr, /BUB_TELEGRAM_ALLOW_USERS/);
    assert.equal(telegram.callsOf("sendMessage").length, 0);
  });

  it("exits 1 with a clear message when no channel is enabled", async () => {
    const result = await runBub(["gateway"], { home: home.path, env: { BUB_HOME: bubHome }, timeoutMs: 15_000 });
    assert.equal(result.code, 1, result.stdout);
    assert.match(result.stderr, /channel/i);
    assert.doesNotMatch(result.stderr, /\n\s+at /, "no stack trace");
  });
});
