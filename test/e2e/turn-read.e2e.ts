/**
 * A gateway's turn reads its session tape once, from the last anchor it saw (issues 33 and
 * 35): on the installed package, what another process writes to the same session between two
 * turns, and its reset of the tape, are still what the next turn's model sees.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { reply } from "../support/fake-openai.ts";
import { ALICE, useGatewayFixture } from "./support/gateway-fixture.ts";
import { runBub } from "./support/installed.ts";
import { within } from "./support/live.ts";

describe("a gateway turn's one read of its tape (installed package, file tapes)", () => {
  const fx = useGatewayFixture();

  /** The non-system contents the model was sent in its last request. */
  const lastContext = () => (fx.openai.requests.at(-1)?.body.messages ?? []).filter((message) => message.role !== "system").map((message) => String(message.content));

  it("sees another process's turn and its reset of the session between two of its own turns", async () => {
    fx.openai.script(reply.text("first answer"), reply.text("cli answer"), reply.text("second answer"), reply.text("third answer"));
    const live = await fx.start();
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "first question" });
    await within(fx.telegram.waitForCalls("sendMessage", 1), 15_000, "the first reply");

    // Another process writes a turn of the same session while the gateway runs.
    const session = ["--session-id", `telegram:${ALICE}`];
    const cli = await runBub(["run", ...session, "a word from the terminal"], { home: fx.home, env: fx.env() });
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /cli answer/);

    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "second question" });
    const [, second] = await within(fx.telegram.waitForCalls("sendMessage", 2), 15_000, "the second reply");
    assert.equal(second?.payload.text, "second answer");
    const seen = lastContext();
    for (const text of ["first answer", "a word from the terminal", "cli answer"]) assert.ok(seen.some((content) => content.includes(text)), `${text} is in the context: ${JSON.stringify(seen)}`);

    // Another process resets the tape: the gateway's next turn starts from the new tape.
    const reset = await runBub(["run", ...session, ",tape.reset"], { home: fx.home, env: fx.env() });
    assert.equal(reset.code, 0, reset.stderr);
    fx.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "third question" });
    const [, , third] = await within(fx.telegram.waitForCalls("sendMessage", 3), 15_000, "the third reply");
    assert.equal(third?.payload.text, "third answer");
    const after = lastContext();
    assert.ok(after.at(-1)?.includes("third question"), JSON.stringify(after));
    for (const text of ["first", "second", "terminal", "cli answer"]) assert.ok(!after.some((content) => content.includes(text)), `${text} is gone after the reset: ${JSON.stringify(after)}`);
    await fx.stop(live);
  });
});
