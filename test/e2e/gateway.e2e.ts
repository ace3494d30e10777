/**
 * `bub gateway` of the installed binary serving Telegram against a fake Bot API, with the
 * model behind a fake OpenAI-compatible server, both on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { reply } from "../support/fake-openai.ts";
import { ALICE, useGatewayFixture } from "./support/gateway-fixture.ts";
import { runBub } from "./support/installed.ts";
import { onlyTape, pollUntil, within } from "./support/live.ts";

describe("bub gateway with Telegram (installed package, fake Bot API)", () => {
  const fx = useGatewayFixture();

  it("answers a private message with the model's reply, then exits 0 on SIGTERM", async () => {
    fx.openai.script(reply.text("Pong from the model."));
    const live = await fx.start();
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "ping" });
    const [sent] = await within(fx.telegram.waitForCalls("sendMessage", 1), 15_000, "the reply at sendMessage");
    assert.equal(String(sent!.payload.chat_id), String(ALICE));
    assert.equal(sent!.payload.text, "Pong from the model.");
    assert.equal(fx.openai.requests.length, 1);
    const user = fx.openai.requests[0]!.body.messages.filter((message) => message.role === "user").at(-1);
    assert.match(String(user?.content), /ping/);
    await fx.stop(live);
    const entries = await onlyTape(fx.bubHome);
    assert.ok(entries.some((entry) => entry.kind === "message" && entry.payload.role === "assistant" && entry.payload.content === "Pong from the model."), "the answer is on the tape");
    assert.equal(fx.telegram.callsOf("sendMessage").length, 1, "one reply, no error message");
  });

  it("says one line per message in and per reply out on its terminal, secrets redacted, long text clipped", async () => {
    const secret = "sk-gateway-terminal-secret-0123456789";
    fx.openai.script(reply.text("Pong from the model."), reply.text(`Here is a much longer answer that goes on well past sixty characters of text.`));
    const live = await fx.start({ BUB_API_KEY: secret });
    await pollUntil(() => (/^bub gateway: serving telegram \(Ctrl-C to stop\)$/m.test(live.stderr()) ? true : undefined), "the serving line");
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: `ping with ${secret}` });
    await within(fx.telegram.waitForCalls("sendMessage", 1), 15_000, "the first reply");
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "and a longer one" });
    await within(fx.telegram.waitForCalls("sendMessage", 2), 15_000, "the second reply");
    await pollUntil(() => (live.stderr().split("\n").filter((line) => line.startsWith("INFO bub:messages out")).length === 2 ? true : undefined), "both out lines");
    await fx.stop(live);
    const lines = live.stderr().split("\n").filter((line) => line.startsWith("INFO bub:messages "));
    assert.equal(lines.length, 4, live.stderr());
    assert.match(lines[0]!, new RegExp(`^INFO bub:messages in telegram chat_id=${ALICE} session_id=telegram:${ALICE}: ping with \\[redacted:[a-z_]+\\]$`));
    assert.equal(lines[1], `INFO bub:messages out telegram chat_id=${ALICE} session_id=telegram:${ALICE}: Pong from the model.`);
    assert.equal(lines[2], `INFO bub:messages in telegram chat_id=${ALICE} session_id=telegram:${ALICE}: and a longer one`);
    assert.equal(lines[3], `INFO bub:messages out telegram chat_id=${ALICE} session_id=telegram:${ALICE}: Here is a much longer answer that goes on well past sixty c…`);
    assert.doesNotMatch(live.stderr(), new RegExp(secret));
  });

  it("finishes the turn in flight when SIGTERM arrives, delivers its reply, and exits 0", async () => {
    fx.openai.script(reply.text("Late but delivered.", { delayMs: 400 }));
    const live = await fx.start();
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "take your time" });
    await within(fx.openai.waitForRequest(0), 15_000, "the model call");
    live.child.kill("SIGTERM");
    const result = await live.exited(8_000);
    assert.equal(result.code, 0, `exit ${result.code}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
    assert.deepEqual(
      fx.telegram.callsOf("sendMessage").map((call) => call.payload.text),
      ["Late but delivered."],
    );
  });

  it("refuses a user outside BUB_TELEGRAM_ALLOW_USERS without calling the model", async () => {
    const live = await fx.start();
    fx.telegram.sendText({ chatId: 99, userId: 99, text: "let me in" });
    const [sent] = await within(fx.telegram.waitForCalls("sendMessage", 1), 15_000, "the refusal at sendMessage");
    assert.equal(String(sent!.payload.chat_id), "99");
    assert.equal(sent!.payload.text, "Access denied.");
    await fx.stop(live);
    assert.equal(fx.openai.requests.length, 0);
  });

  it("records a failed turn in <BUB_HOME>/logs/bub.log with its time and session id", async () => {
    fx.openai.script(reply.error(401, "Incorrect API key provided"));
    const live = await fx.start({ BUB_API_KEY: "sk-gateway-log-key" });
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "hello?" });
    const [sent] = await within(fx.telegram.waitForCalls("sendMessage", 1), 15_000, "the error at sendMessage");
    assert.match(String(sent!.payload.text), /Incorrect API key provided/);
    await fx.stop(live);
    const log = await readFile(join(fx.bubHome, "logs", "bub.log"), "utf8");
    assert.match(log, new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z ERROR \\S+ turn\\.error stage=run_model session_id=telegram:${ALICE} turn_id=[0-9a-f-]{36}: .*HTTP 401`, "m"));
    assert.doesNotMatch(log, /sk-gateway-log-key/);
  });

  it("exits 1 saying what to set when no allowlist is configured", async () => {
    const result = await runBub(["gateway"], { home: fx.home, env: fx.env({ BUB_TELEGRAM_ALLOW_USERS: "" }), timeoutMs: 15_000 });
    assert.equal(result.code, 1, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
    assert.match(result.stderr, /BUB_TELEGRAM_ALLOW_USERS/);
    assert.doesNotMatch(result.stderr, /serving/, "it does not announce what it then refuses to serve");
    assert.equal(result.stderr.trim().split("\n").length, 1, `one line:\n${result.stderr}`);
    assert.equal(fx.telegram.callsOf("sendMessage").length, 0);
  });

  it("exits 1 with a clear message when no channel is enabled", async () => {
    const result = await runBub(["gateway"], { home: fx.home, env: { BUB_HOME: fx.bubHome }, timeoutMs: 15_000 });
    assert.equal(result.code, 1, result.stdout);
    assert.match(result.stderr, /channel/i);
    assert.doesNotMatch(result.stderr, /\n\s+at /, "no stack trace");
  });
});
