// BUB_APPROVAL=ask in a real `bub gateway` process against the fake Bot API and the fake
// model: the model calls bash, the gateway posts Approve / Deny buttons in the turn's chat,
// only a press from an allowed user counts, and a no reaches the model as a tool error.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { reply } from "../support/fake-openai.ts";
import { useFakeOpenAI } from "../support/fake-openai-suite.ts";
import type { FakeTelegram, RecordedCall } from "../support/fake-telegram.ts";
import { withSourceGateway } from "../support/source-gateway.ts";
import { eventually } from "../support/eventually.ts";


/** The n-th sendMessage call with inline buttons (an approval question). */
function question(telegram: FakeTelegram, index: number): Promise<RecordedCall> {
  return eventually(() => telegram.callsOf("sendMessage").filter((call) => call.status === 200 && call.payload.reply_markup !== undefined)[index], `approval question ${index + 1}`);
}

describe("approval in Telegram (bub gateway, BUB_APPROVAL=ask)", () => {
  const server = useFakeOpenAI();

  it("runs bash only after an allowed user presses Approve; a stranger's press is ignored; Deny and no answer are tool errors", { timeout: 60_000 }, () =>
    withSourceGateway({ BUB_MODEL: "fake:any", BUB_API_BASE: server.url, BUB_API_KEY: "sk-test", BUB_APPROVAL: "ask", BUB_APPROVAL_TIMEOUT_SECONDS: "3" }, async ({ telegram, dir }) => {
      // Approve: the command runs once an allowed user says yes.
      server.script(reply.toolCalls([{ name: "bash", arguments: JSON.stringify({ cmd: "echo approved > approved.txt && echo ran" }) }]), reply.text("Made the file."));
      telegram.sendText({ chatId: 7, userId: 7, text: "make a file" });
      const asked = await question(telegram, 0);
      assert.equal(asked.payload.chat_id, "7");
      assert.match(String(asked.payload.text), /^Approval needed: bash runs a shell command\.\n\necho approved > approved\.txt && echo ran$/);
      const buttons = telegram.buttonsOf(asked);
      assert.deepEqual(buttons.map((button) => button.text), ["Approve", "Deny"]);
      const [approve, denyButton] = buttons.map((button) => button.data);

      const strangerQuery = telegram.pressButton({ message: asked, data: approve!, from: { id: 99, username: "stranger" } });
      const strangerAnswer = await eventually(() => telegram.callsOf("answerCallbackQuery").find((call) => call.payload.callback_query_id === strangerQuery), "the stranger's press answered");
      assert.match(String(strangerAnswer.payload.text), /may not answer/);
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(existsSync(join(dir.path, "approved.txt")), false, "a stranger's press does not run the command");
      assert.equal(server.requests.length, 1, "the turn still waits");

      const ownQuery = telegram.pressButton({ message: asked, data: approve!, from: { id: 7, username: "user7" } });
      const answer = await eventually(() => telegram.callsOf("sendMessage").find((call) => call.payload.text === "Made the file."), "the final answer");
      assert.equal(answer.payload.chat_id, "7");
      assert.equal(existsSync(join(dir.path, "approved.txt")), true, "the approved command ran");
      const tool = server.requests[1]!.body.messages.find((message) => message.role === "tool");
      assert.equal(tool?.content, "ran");
      assert.ok(telegram.callsOf("answerCallbackQuery").some((call) => call.payload.callback_query_id === ownQuery && call.payload.text === "Approved"));
      const edited = await eventually(() => telegram.callsOf("editMessageText").find((call) => call.payload.chat_id === "7" && String(call.payload.text).startsWith(String(asked.payload.text))), "the question updated");
      assert.match(String(edited.payload.text), /\n\nApproved by @user7\.$/);
      assert.equal(edited.payload.reply_markup, undefined, "the buttons are gone");

      // Deny: the model's next request carries the tool error, and the turn goes on.
      server.requests.length = 0;
      server.script(reply.toolCalls([{ name: "bash", arguments: JSON.stringify({ cmd: "echo no > denied.txt" }) }]), reply.text("Understood, I will not."));
      telegram.sendText({ chatId: 7, userId: 7, text: "make another file" });
      const second = await question(telegram, 1);
      assert.notEqual(telegram.buttonsOf(second)[1]!.data, denyButton, "each question has its own buttons");
      telegram.pressButton({ message: second, data: telegram.buttonsOf(second)[1]!.data, from: { id: 7, username: "user7" } });
      await eventually(() => telegram.callsOf("sendMessage").find((call) => call.payload.text === "Understood, I will not."), "the answer after the denial");
      const denied = server.requests[1]!.body.messages.findLast((message) => message.role === "tool");
      assert.match(String(denied?.content), /bash: the user denied this call/);
      assert.equal(existsSync(join(dir.path, "denied.txt")), false);

      // A press on a question that is no longer open changes nothing.
      const late = telegram.pressButton({ message: asked, data: approve!, from: { id: 7, username: "user7" } });
      const lateAnswer = await eventually(() => telegram.callsOf("answerCallbackQuery").find((call) => call.payload.callback_query_id === late), "the late press answered");
      assert.match(String(lateAnswer.payload.text), /no longer open/);

      // No answer within BUB_APPROVAL_TIMEOUT_SECONDS is a no.
      server.requests.length = 0;
      server.script(reply.toolCalls([{ name: "bash", arguments: JSON.stringify({ cmd: "echo late > late.txt" }) }]), reply.text("Nobody answered."));
      telegram.sendText({ chatId: 7, userId: 7, text: "one more" });
      const third = await question(telegram, 2);
      await eventually(() => telegram.callsOf("sendMessage").find((call) => call.payload.text === "Nobody answered."), "the answer after the timeout");
      assert.match(String(server.requests[1]!.body.messages.findLast((message) => message.role === "tool")?.content), /bash: the user did not answer within 3 s, so this call was denied/);
      const expired = await eventually(() => telegram.callsOf("editMessageText").find((call) => String(call.payload.text).startsWith(String(third.payload.text))), "the timed-out question updated");
      assert.match(String(expired.payload.text), /No answer in time: denied\.$/);
      assert.equal(existsSync(join(dir.path, "late.txt")), false);
    }));
});
