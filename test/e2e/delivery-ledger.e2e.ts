/**
 * The outbound delivery ledger of the installed `bub gateway` against a fake Bot API that
 * injects faults: 500s and 429s are retried and each reply arrives once; a connection reset
 * after Telegram took the message is tried once more and marked possibly repeated; a 403
 * (bot blocked) is a dead letter at once, which `bub delivery list` shows, `retry` sends and
 * `purge` removes; a retry waiting in one chat does not hold up another; and a `kill -9`
 * between recording a reply and its confirmation sends it after the restart without
 * running the turn again. A `telegram.send` message goes through the ledger as well.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { reply } from "../support/fake-openai.ts";
import type { FakeTelegram } from "../support/fake-telegram.ts";
import { ALICE, useGatewayFixture } from "./support/gateway-fixture.ts";
import { runBub } from "./support/installed.ts";
import { pollUntil, within } from "./support/live.ts";

/** A second allowed user, whose private chat has the same id. */
const BOB = 8;
const FAST = { BUB_DELIVERY_BACKOFF_SECONDS: "0.05", BUB_TELEGRAM_ALLOW_USERS: `${ALICE},${BOB}` };

interface Listed {
  pending: number;
  dead_letters: { id: number; chat_id: string; error: string; text: string; possibly_repeated: boolean }[];
  possibly_repeated: { id: number; text: string }[];
}

/** How many times Telegram took each text (calls answered 200, or taken before the connection died). */
function deliveredTexts(telegram: FakeTelegram): Map<string, number> {
  const counts = new Map<string, number>();
  for (const call of telegram.succeededOf("sendMessage")) counts.set(String(call.payload.text), (counts.get(String(call.payload.text)) ?? 0) + 1);
  return counts;
}

describe("bub gateway's delivery ledger (installed package, fake Bot API with faults)", () => {
  const fx = useGatewayFixture();

  async function delivery(...args: string[]): Promise<string> {
    const result = await runBub(["delivery", ...args], { home: fx.home, env: fx.env(FAST) });
    assert.equal(result.code, 0, `bub delivery ${args.join(" ")}: exit ${result.code}\n${result.stderr}`);
    return result.stdout;
  }
  const listed = async (): Promise<Listed> => JSON.parse(await delivery("list", "--json")) as Listed;
  const delivered = (text: string) => pollUntil(() => (deliveredTexts(fx.telegram).has(text) ? true : undefined), `"${text}" delivered`, { timeoutMs: 15_000 });

  it("retries 500s and a 429 with retry_after, and delivers each reply exactly once", async () => {
    fx.openai.script(reply.text("First answer."), reply.text("Second answer."), reply.text("Third answer."));
    const gateway = await fx.start(FAST);
    fx.telegram.fail("sendMessage", { status: 500 });
    fx.telegram.fail("sendMessage", { status: 502 });
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "one" });
    await delivered("First answer.");
    fx.telegram.fail("sendMessage", { status: 429, retryAfter: 1 });
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "two" });
    await delivered("Second answer.");
    // A reset before Telegram took it: sent again, once.
    fx.telegram.fail("sendMessage", { network: true });
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "three" });
    await delivered("Third answer.");
    await fx.stop(gateway);
    assert.deepEqual([...deliveredTexts(fx.telegram)], [["First answer.", 1], ["Second answer.", 1], ["Third answer.", 1]]);
    assert.deepEqual(fx.telegram.callsOf("sendMessage").map((call) => call.status), [500, 502, 200, 429, 200, 0, 200]);
    const after = await listed();
    assert.equal(after.pending, 0);
    assert.deepEqual(after.dead_letters, []);
    // The reset one was tried once more; whether it arrived twice cannot be known, so it is listed.
    assert.deepEqual(after.possibly_repeated.map((record) => record.text), ["Third answer."]);
  });

  it("tries a reply whose connection died after Telegram took it once more, and lists it as possibly repeated", async () => {
    fx.openai.script(reply.text("Maybe twice."));
    const gateway = await fx.start(FAST);
    fx.telegram.fail("sendMessage", { network: true, delivered: true });
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "hello" });
    await pollUntil(() => (fx.telegram.succeededOf("sendMessage").length >= 2 ? true : undefined), "the second try", { timeoutMs: 15_000 });
    const list = await pollUntil(async () => {
      const now = await listed();
      return now.possibly_repeated.length > 0 ? now : undefined;
    }, "the record marked possibly repeated");
    assert.deepEqual(list.possibly_repeated.map((record) => record.text), ["Maybe twice."]);
    assert.equal(fx.telegram.callsOf("sendMessage").length, 2, "tried exactly once more");
    assert.match(await delivery("list"), /Sent after a try whose connection died/);
    assert.match(await delivery("purge", "--all"), /^1 reply purged\.$/m);
    assert.deepEqual((await listed()).possibly_repeated, []);
    await fx.stop(gateway);
  });

  it("makes a 403 (bot blocked) a dead letter at once; bub delivery lists it, retry sends it, purge removes one; another chat is not held up", async () => {
    fx.openai.script(reply.text("You blocked me."), reply.text("Hello Bob."), reply.text("Chat not found."));
    const gateway = await fx.start(FAST);
    fx.telegram.fail("sendMessage", { status: 403, description: "Forbidden: bot was blocked by the user", chatId: ALICE });
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "hi" });
    const dead = await pollUntil(async () => (await listed()).dead_letters[0], "the dead letter", { timeoutMs: 15_000 });
    assert.equal(fx.telegram.callsOf("sendMessage").length, 1, "not retried");
    assert.equal(dead.chat_id, String(ALICE));
    assert.equal(dead.text, "You blocked me.");
    assert.match(dead.error, /sendMessage answered 403 Forbidden: bot was blocked by the user/);
    const table = await delivery("list");
    assert.match(table, /0 replies wait to be sent; 1 dead letter\./);
    assert.match(table, new RegExp(`^${dead.id}\\s+${ALICE}\\s+telegram:${ALICE}\\s+1\\s`, "m"));
    // Bob is answered while Alice's reply is a dead letter.
    fx.telegram.sendText({ chatId: BOB, userId: BOB, text: "hi" });
    await delivered("Hello Bob.");
    // Unblocked: retried by hand, the running gateway sends it.
    assert.match(await delivery("retry", String(dead.id)), /^1 reply will be sent again/m);
    await delivered("You blocked me.");
    assert.deepEqual((await listed()).dead_letters, []);
    // A retry of an id that is no dead letter fails with a one-line error.
    const wrong = await runBub(["delivery", "retry", String(dead.id)], { home: fx.home, env: fx.env(FAST) });
    assert.notEqual(wrong.code, 0);
    assert.match(wrong.stderr, /1 of 1 id\(s\) are not dead letters/);
    // Another dead letter, purged instead.
    fx.telegram.fail("sendMessage", { status: 400, description: "Bad Request: chat not found", chatId: ALICE });
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "again" });
    const second = await pollUntil(async () => (await listed()).dead_letters[0], "the second dead letter", { timeoutMs: 15_000 });
    assert.match(await delivery("purge", String(second.id)), /^1 reply purged\.$/m);
    assert.deepEqual((await listed()).dead_letters, []);
    await fx.stop(gateway);
    assert.deepEqual([...deliveredTexts(fx.telegram)].sort(), [["Hello Bob.", 1], ["You blocked me.", 1]]);
  });

  it("keeps a reply waiting out a long retry_after across a SIGTERM, answers another chat meanwhile, and sends it once after the restart", async () => {
    fx.openai.script(reply.text("Alice waits."), reply.text("Bob first."));
    const env = { ...FAST, BUB_DELIVERY_MAX_BACKOFF_SECONDS: "7200" };
    let gateway = await fx.start(env);
    fx.telegram.fail("sendMessage", { status: 429, retryAfter: 3600, chatId: ALICE });
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "slow" });
    await within(fx.telegram.waitForCalls("sendMessage", 1), 15_000, "Alice's first try");
    fx.telegram.sendText({ chatId: BOB, userId: BOB, text: "quick" });
    await delivered("Bob first.");
    assert.equal((await listed()).pending, 1, "Alice's reply waits in the ledger");
    await fx.stop(gateway);
    gateway = await fx.start(env);
    await delivered("Alice waits.");
    await fx.stop(gateway);
    assert.deepEqual([...deliveredTexts(fx.telegram)].sort(), [["Alice waits.", 1], ["Bob first.", 1]]);
    assert.equal(fx.openai.requests.length, 2, "no turn ran again");
  });

  it("sends a telegram.send message through the ledger: a 502 is retried, the model gets the message id, and it arrives once", async () => {
    fx.openai.script(reply.toolCalls([{ id: "call_send", name: "telegram_send", arguments: JSON.stringify({ text: "Working on it." }) }]), reply.text("Done."));
    const gateway = await fx.start(FAST);
    fx.telegram.fail("sendMessage", { status: 502 });
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "long job" });
    await delivered("Done.");
    await fx.stop(gateway);
    assert.deepEqual([...deliveredTexts(fx.telegram)], [["Working on it.", 1], ["Done.", 1]]);
    assert.deepEqual(fx.telegram.callsOf("sendMessage").map((call) => [call.payload.text, call.status]), [["Working on it.", 502], ["Working on it.", 200], ["Done.", 200]]);
    const toolResult = JSON.stringify(fx.openai.requests[1]?.body.messages ?? []);
    assert.match(toolResult, new RegExp(`sent to ${ALICE}: message_id=\\d+`), "the model was told the id Telegram gave the message");
    assert.equal((await listed()).pending, 0);
  });

  it("sends a reply a kill -9 cut off between recording and confirmation after the restart, once, without running the turn again", async () => {
    fx.openai.script(reply.text("Survives the crash."));
    let gateway = await fx.start(FAST);
    fx.telegram.fail("sendMessage", { hang: true });
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "crash now" });
    await within(fx.telegram.waitForCalls("sendMessage", 1), 15_000, "the send that hangs");
    gateway.kill();
    await gateway.exited(5_000);
    gateway = await fx.start(FAST);
    await delivered("Survives the crash.");
    await fx.stop(gateway);
    assert.deepEqual([...deliveredTexts(fx.telegram)], [["Survives the crash.", 1]]);
    assert.equal(fx.openai.requests.length, 1, "the turn ran once");
  });
});
