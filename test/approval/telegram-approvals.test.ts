// Who may answer a Telegram approval question, without a bot: the question's buttons, the
// allowlist rule, the turn's sender when no user allowlist is set, and taking a question back.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Context } from "grammy";
import { TelegramApprovals, type ApprovalBotApi } from "../../src/channels/telegram/approval.ts";
import { ChannelMessage } from "../../src/channels/message.ts";
import type { ApprovalRequest } from "../../src/kernel/approval.ts";

function fakeApi() {
  const calls: { method: string; args: unknown[] }[] = [];
  const api = {
    sendMessage: async (...args: unknown[]) => (calls.push({ method: "sendMessage", args }), { message_id: 41 }),
    editMessageText: async (...args: unknown[]) => (calls.push({ method: "editMessageText", args }), true),
    answerCallbackQuery: async () => true,
  } as unknown as ApprovalBotApi;
  return { api, calls };
}

/** A button press as grammY hands it to the handler; `answers` collects answerCallbackQuery texts. */
function press(data: string, from: { id: number; username?: string }, chatId: number, answers: string[]): Context {
  return {
    callbackQuery: { id: "q", data, from: { is_bot: false, first_name: "U", ...from }, chat_instance: "i", message: { message_id: 41, date: 0, chat: { id: chatId, type: "group" } } },
    answerCallbackQuery: async (options: { text: string }) => void answers.push(options.text),
  } as unknown as Context;
}

function request(chatId: string, content: string): ApprovalRequest {
  return {
    tool: "bash",
    arguments: { cmd: "ls" },
    summary: "ls",
    reason: "runs a shell command",
    sessionId: `telegram:${chatId}`,
    message: new ChannelMessage({ sessionId: `telegram:${chatId}`, channel: "telegram", chatId, content }),
  };
}

const buttonsOf = (call: { args: unknown[] }) =>
  (call.args[2] as { reply_markup: { inline_keyboard: { text: string; callback_data: string }[][] } }).reply_markup.inline_keyboard.flat();

describe("Telegram approval questions", () => {
  it("without a user allowlist only the turn's sender may answer (the last message of a debounced batch)", async () => {
    const { api, calls } = fakeApi();
    const approvals = new TelegramApprovals({ api: () => api, users: () => new Set(), describeError: String });
    const batch = `${JSON.stringify({ message: "hi", sender_id: "5" })}\n${JSON.stringify({ message: "run ls", sender_id: "6" })}`;
    const asking = approvals.ask(request("-100", batch), new AbortController().signal);
    await new Promise((resolve) => setImmediate(resolve));
    const [yes] = buttonsOf(calls[0]!);
    const answers: string[] = [];
    await approvals.onCallbackQuery(press(yes!.callback_data, { id: 5 }, -100, answers));
    await approvals.onCallbackQuery(press(yes!.callback_data, { id: 6 }, -200, answers));
    await approvals.onCallbackQuery(press(yes!.callback_data, { id: 6, username: "six" }, -100, answers));
    assert.deepEqual(await asking, { approved: true, by: "@six" });
    assert.deepEqual(answers, ["You may not answer this question.", "This question is no longer open.", "Approved"]);
    assert.equal(calls[1]!.method, "editMessageText");
    assert.match(String(calls[1]!.args[2]), /Approved by @six\.$/);
  });

  it("with a user allowlist any listed user may answer, by id or username; presses of other buttons are left alone", async () => {
    const { api, calls } = fakeApi();
    const approvals = new TelegramApprovals({ api: () => api, users: () => new Set(["9", "boss"]), describeError: String });
    const asking = approvals.ask(request("-100", JSON.stringify({ message: "run ls", sender_id: "6" })), new AbortController().signal);
    await new Promise((resolve) => setImmediate(resolve));
    const [, no] = buttonsOf(calls[0]!);
    const answers: string[] = [];
    await approvals.onCallbackQuery(press("something_else", { id: 9 }, -100, answers));
    await approvals.onCallbackQuery(press(no!.callback_data, { id: 6 }, -100, answers));
    await approvals.onCallbackQuery(press(no!.callback_data, { id: 77, username: "Boss" }, -100, answers));
    assert.deepEqual(await asking, { approved: false, by: "@Boss" });
    assert.deepEqual(answers, ["You may not answer this question.", "Denied"]);
  });

  it("takes the question back when the signal aborts, and says nobody can be asked while the channel is stopped", async () => {
    const { api, calls } = fakeApi();
    const approvals = new TelegramApprovals({ api: () => api, users: () => new Set(), describeError: String });
    const asking = approvals.ask(request("7", JSON.stringify({ message: "x", sender_id: "7" })), AbortSignal.timeout(20));
    assert.deepEqual(await asking, { approved: false });
    assert.match(String(calls[1]!.args[2]), /No answer in time: denied\.$/);
    const stopped = new TelegramApprovals({ api: () => null, users: () => new Set(), describeError: String });
    assert.deepEqual(await stopped.ask(request("7", "{}"), new AbortController().signal), { approved: false, unavailable: "the Telegram channel is not running" });
  });
});
