/**
 * The `collect` and `interrupt` admission modes on the installed `bub gateway`, against the
 * fake Bot API and a fake model whose first call is slow: messages collected during a turn
 * become one follow-up turn holding them in order; a new message interrupts the running turn
 * (saved on the tape as interrupted, naming the new message) and only it is answered.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { reply } from "../support/fake-openai.ts";
import { ALICE, useGatewayFixture } from "./support/gateway-fixture.ts";
import { runBub } from "./support/installed.ts";
import { onlyTape, pollUntil, within, type TapeEntry } from "./support/live.ts";

/** The text of each user message the model was sent, newest last. */
function userTexts(messages: Record<string, unknown>[]): string[] {
  return messages.filter((message) => message.role === "user").map((message) => (typeof message.content === "string" ? message.content : JSON.stringify(message.content)));
}

function events(entries: TapeEntry[], name: string): TapeEntry[] {
  return entries.filter((entry) => entry.kind === "event" && entry.payload.name === name);
}

describe("admission modes collect and interrupt (installed gateway, fake Bot API)", () => {
  const fx = useGatewayFixture();
  /** The gateway's log file so far (INFO and up: admission decisions are there, not on the terminal). */
  const gatewayLog = () => readFile(join(fx.bubHome, "logs", "bub.log"), "utf8").catch(() => "");

  it("collect: three messages sent during a running turn give exactly one follow-up turn holding all three in order", async () => {
    const gate = Promise.withResolvers<void>();
    fx.openai.script(reply.text("First answer.", { waitFor: gate.promise }), reply.text("Collected answer."));
    const live = await fx.start({ BUB_ADMISSION: "collect" });
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "start a long task" });
    await within(fx.openai.waitForRequest(0), 15_000, "the first model call");
    // One at a time, each collected before the next is sent (a burst may arrive as one debounced message).
    for (const [index, text] of ["alpha note", "beta note", "gamma note"].entries()) {
      fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text });
      await pollUntil(async () => (new RegExp(`admission collect session_id=telegram:${ALICE} collected=${index + 1}\\b`).test(await gatewayLog()) ? true : undefined), `message ${index + 1} collected`);
    }
    gate.resolve();
    const sent = await within(fx.telegram.waitForCalls("sendMessage", 2), 15_000, "both replies");
    assert.deepEqual(sent.map((call) => call.payload.text), ["First answer.", "Collected answer."]);
    await fx.stop(live);
    assert.equal(fx.openai.requests.length, 2, "one turn for the first message, one for the three collected");
    const last = userTexts(fx.openai.requests[1]!.body.messages).at(-1) ?? "";
    const positions = ["alpha note", "beta note", "gamma note"].map((text) => last.indexOf(text));
    assert.ok(positions.every((position) => position >= 0), `all three in one prompt:\n${last}`);
    assert.deepEqual([...positions].sort((a, b) => a - b), positions, "in the order they were sent");
    assert.equal(fx.telegram.callsOf("sendMessage").length, 2);
  });

  it("interrupt: a second message cancels the first turn (saved as interrupted) and only the second is answered", async () => {
    fx.openai.script(reply.hang(), reply.text("Fresh answer."));
    const live = await fx.start({ BUB_ADMISSION: "interrupt" });
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "write me a long essay" });
    await within(fx.openai.waitForRequest(0), 15_000, "the first model call");
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "actually, just say hi" });
    const [answer] = await within(fx.telegram.waitForCalls("sendMessage", 1), 15_000, "the reply to the second message");
    assert.equal(answer!.payload.text, "Fresh answer.");
    await fx.stop(live);
    assert.deepEqual(fx.telegram.callsOf("sendMessage").map((call) => call.payload.text), ["Fresh answer."], "nothing from the interrupted turn, no error message");
    assert.equal(fx.openai.requests.length, 2);
    assert.match(userTexts(fx.openai.requests[1]!.body.messages).at(-1) ?? "", /actually, just say hi/);

    const entries = await onlyTape(fx.bubHome);
    const users = entries.filter((entry) => entry.kind === "message" && entry.payload.role === "user");
    const first = users.findIndex((entry) => /write me a long essay/.test(String(entry.payload.content)));
    const second = users.findIndex((entry) => /actually, just say hi/.test(String(entry.payload.content)));
    assert.ok(first >= 0 && second > first, "both prompts are on the tape, in order");
    const interrupted = events(entries, "interrupted");
    assert.equal(interrupted.length, 1);
    const data = interrupted[0]!.payload.data as Record<string, unknown>;
    assert.match(String(data.reason), /^interrupted by a newer message in telegram:7: .*actually, just say hi/);
    assert.equal(data.signal, null);
    const at = entries.indexOf(interrupted[0]!);
    assert.ok(at > entries.indexOf(users[first]!) && at < entries.indexOf(users[second]!), "the interrupted event closes the first turn before the second begins");
    assert.ok(entries.some((entry) => entry.kind === "message" && entry.payload.role === "assistant" && entry.payload.content === "Fresh answer."));
    assert.ok(!entries.some((entry) => entry.kind === "message" && entry.payload.role === "assistant" && entries.indexOf(entry) < at), "the first turn has no answer");
  });

  for (const policy of ["collect", "interrupt"]) {
    it(`refuses BUB_ADMISSION=${policy} with the shared PostgreSQL queue, in one line`, async () => {
      const result = await runBub(["gateway"], { home: fx.home, env: fx.env({ BUB_ADMISSION: policy, BUB_DATABASE_URL: "postgres://bub:secret@127.0.0.1:9/bub" }), timeoutMs: 15_000 });
      assert.equal(result.code, 1, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`);
      assert.equal(result.stderr.trim().split("\n").length, 1, `one line:\n${result.stderr}`);
      assert.match(result.stderr, new RegExp(`^bub: BUB_ADMISSION=${policy} does not work with the shared inbound queue \\(BUB_DATABASE_URL\\) — `));
      assert.equal(fx.telegram.callsOf("getUpdates").length, 0, "it never polls");
    });
  }
});
