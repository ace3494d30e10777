/**
 * A turn `kill -9` cuts off after its first tool call completed resumes after the restart
 * (issue 36): the tool is not run again (its counter file shows one call), the model is given
 * the recorded result, the answer arrives, and the tape shows a `turn.resumed` event and one
 * user message. Installed package, fake Bot API and fake model on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { reply, type RecordedRequest } from "../support/fake-openai.ts";
import { ALICE, useGatewayFixture } from "./support/gateway-fixture.ts";
import { onlyTape, within } from "./support/live.ts";

const hasToolResult = (request: RecordedRequest): boolean => request.body.messages.some((message) => message.role === "tool");

describe("a turn cut off by kill -9 resumes after the restart (installed package)", () => {
  const fixture = useGatewayFixture();

  it("does not run a completed tool call again, answers, and records the resumption", async () => {
    const counter = join(fixture.home, "counter.txt");
    const toolCall = reply.toolCalls([{ id: "call_count", name: "bash", arguments: JSON.stringify({ cmd: `echo call >> '${counter}'` }) }]);
    // 1: the tool call; 2: the next step hangs until the kill; 3 (after the restart): the
    // answer when the request carries the tool's result, else the tool call again.
    fixture.openai.script(toolCall, reply.hang(), (request) => (hasToolResult(request) ? reply.text("counted once") : toolCall));

    const first = await fixture.start();
    fixture.telegram.sendText({ chatId: ALICE, userId: ALICE, text: "count please" });
    await within(fixture.openai.waitForRequest(1), 20_000, "the second model call (after the tool ran)");
    assert.equal(await readFile(counter, "utf8"), "call\n", "the tool ran once before the kill");
    first.child.kill("SIGKILL");
    await first.exited(5_000);

    const second = await fixture.start();
    const [answer] = await within(fixture.telegram.waitForCalls("sendMessage", 1), 20_000, "the answer after the restart");
    assert.match(String(answer?.payload.text), /counted once/);
    assert.equal(await readFile(counter, "utf8"), "call\n", "the completed tool call was not run again");

    const resumed = fixture.openai.requests[2];
    assert.ok(resumed && hasToolResult(resumed), "the resumed step was given the recorded tool result");
    const users = resumed.body.messages.filter((message) => message.role === "user" && JSON.stringify(message.content).includes("count please"));
    assert.equal(users.length, 1, "the user's message is in the context once");
    await fixture.stop(second);

    const tape = await onlyTape(fixture.bubHome);
    const events = tape.filter((entry) => entry.kind === "event").map((entry) => entry.payload.name);
    assert.equal(events.filter((name) => name === "turn.resumed").length, 1, `one resumption: ${events.join(", ")}`);
    assert.equal(events.filter((name) => name === "loop.start").length, 1, "the loop started once");
    const event = tape.find((entry) => entry.kind === "event" && entry.payload.name === "turn.resumed");
    assert.deepEqual({ ...(event?.payload.data as Record<string, unknown>), date: undefined, from_turn_id: undefined }, { step: 2, completed_steps: 1, tool_calls: 1, date: undefined, from_turn_id: undefined });
    const userMessages = tape.filter((entry) => entry.kind === "message" && entry.payload.role === "user" && JSON.stringify(entry.payload.content).includes("count please"));
    assert.equal(userMessages.length, 1, "no duplicate user message on the tape");
    assert.equal(tape.filter((entry) => entry.kind === "tool_result").length, 1, "one tool result");
  });
});
