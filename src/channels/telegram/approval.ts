/**
 * Approval questions in Telegram: a tool call the approval policy holds is posted in the
 * turn's chat with two inline buttons, Approve and Deny. Only a press from a user who may
 * answer counts: with `BUB_TELEGRAM_ALLOW_USERS` set, any listed user; without it, the
 * person whose message started the turn (in a private chat, the chat's user). Other
 * presses are answered with a short notice and change nothing. Once answered, timed out
 * or cancelled, the question's buttons are removed and its outcome written under it.
 */
import { randomBytes } from "node:crypto";
import type { Api, Context } from "grammy";
import type { User } from "grammy/types";
import type { ApprovalAnswer, ApprovalRequest } from "../../kernel/approval.ts";
import { createLogger } from "../../kernel/log.ts";
import { TELEGRAM_TEXT_LIMIT } from "./split.ts";

const log = createLogger("bub:telegram");

/** The Bot API calls the questions make. */
export type ApprovalBotApi = Pick<Api, "sendMessage" | "editMessageText" | "answerCallbackQuery">;

/** What the questions read from the running channel. */
export interface TelegramApprovalContext {
  /** The running bot's API; null while the channel is stopped. */
  api(): ApprovalBotApi | null;
  /** The user allowlist (ids and lowercased usernames); empty when none is set. */
  users(): ReadonlySet<string>;
  describeError(error: unknown): string;
}

/** `bub_approval:<id>:yes|no`, well under Telegram's 64 bytes of callback data. */
const CALLBACK = /^bub_approval:([0-9a-f]{16}):(yes|no)$/;
/** Room left for the question's text around the summary. */
const SUMMARY_LIMIT = TELEGRAM_TEXT_LIMIT - 400;

interface OpenQuestion {
  readonly chatId: string;
  /** Who may answer when no user allowlist is set: the turn's sender. */
  readonly senderId: string | null;
  readonly settle: (answer: { approved: boolean; by: string }) => void;
}

/**
 * The sender of the turn's message (`sender_id` in a Telegram message's content), else null.
 * A debounced batch joins its messages' contents with newlines: the last one counts.
 */
function senderOf(message: ApprovalRequest["message"]): string | null {
  for (const line of message.content.split("\n").reverse()) {
    if (!line.startsWith("{")) continue;
    try {
      const parsed: unknown = JSON.parse(line);
      const sender = typeof parsed === "object" && parsed !== null && "sender_id" in parsed ? parsed.sender_id : undefined;
      if (typeof sender === "string" || typeof sender === "number") return String(sender);
    } catch {
      // not one message's JSON: try the line before
    }
  }
  return null;
}

function who(user: User): string {
  return user.username ? `@${user.username}` : String(user.id);
}

/** The question's text. */
function questionText(request: ApprovalRequest): string {
  const summary = request.summary.length > SUMMARY_LIMIT ? `${request.summary.slice(0, SUMMARY_LIMIT)}…` : request.summary;
  return `Approval needed: ${request.tool} ${request.reason}.\n\n${summary}`;
}

/** See the module comment. */
export class TelegramApprovals {
  readonly #context: TelegramApprovalContext;
  readonly #open = new Map<string, OpenQuestion>();

  constructor(context: TelegramApprovalContext) {
    this.#context = context;
  }

  /** Posts the question in the turn's chat and waits for a press that counts, or for `signal`. */
  async ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    const api = this.#context.api();
    const chatId = request.message.chatId;
    if (!api) return { approved: false, unavailable: "the Telegram channel is not running" };
    if (chatId === "") return { approved: false, unavailable: "the turn has no Telegram chat" };
    const id = randomBytes(8).toString("hex");
    const text = questionText(request);
    const answered = Promise.withResolvers<{ approved: boolean; by: string } | null>();
    this.#open.set(id, { chatId, senderId: senderOf(request.message), settle: answered.resolve });
    const onAbort = () => answered.resolve(null);
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      const sent = await api.sendMessage(chatId, text, {
        reply_markup: { inline_keyboard: [[{ text: "Approve", callback_data: `bub_approval:${id}:yes` }, { text: "Deny", callback_data: `bub_approval:${id}:no` }]] },
      });
      const answer = signal.aborted ? null : await answered.promise;
      const outcome = answer === null ? (isTimeout(signal) ? "No answer in time: denied." : "Cancelled: not run.") : `${answer.approved ? "Approved" : "Denied"} by ${answer.by}.`;
      // Removes the buttons (an edit without reply_markup) and says what happened.
      await api.editMessageText(chatId, sent.message_id, `${text}\n\n${outcome}`).catch((error: unknown) => log.warn(`telegram.approval could not update the question in chat_id=${chatId}: ${this.#context.describeError(error)}`));
      if (answer === null) return { approved: false };
      return answer.approved ? { approved: true, by: answer.by } : { approved: false, by: answer.by };
    } finally {
      signal.removeEventListener("abort", onAbort);
      this.#open.delete(id);
    }
  }

  /** Whether a button's callback data answers a question this process asked (and still waits for). */
  asks(data: string | undefined): boolean {
    const match = data === undefined ? null : CALLBACK.exec(data);
    return match !== null && this.#open.has(match[1] ?? "");
  }

  /** True when `user` may answer `question`. */
  #mayAnswer(question: OpenQuestion, user: User): boolean {
    const users = this.#context.users();
    if (users.size > 0) return users.has(String(user.id)) || (user.username !== undefined && users.has(user.username.toLowerCase()));
    return String(user.id) === (question.senderId ?? question.chatId);
  }

  /** Handles a button press (a `callback_query` update); presses of other buttons are left alone. */
  async onCallbackQuery(ctx: Context): Promise<void> {
    const query = ctx.callbackQuery;
    const match = query?.data === undefined ? null : CALLBACK.exec(query.data);
    if (!query || !match) return;
    const reply = (text: string) => ctx.answerCallbackQuery({ text }).catch((error: unknown) => log.debug(`telegram.approval answerCallbackQuery failed: ${this.#context.describeError(error)}`));
    const question = this.#open.get(match[1]);
    if (!question || String(query.message?.chat.id ?? "") !== question.chatId) {
      await reply("This question is no longer open.");
      return;
    }
    if (!this.#mayAnswer(question, query.from)) {
      log.info(`telegram.approval press ignored: user_id=${query.from.id} chat_id=${question.chatId} may not answer`);
      await reply("You may not answer this question.");
      return;
    }
    const approved = match[2] === "yes";
    this.#open.delete(match[1]);
    question.settle({ approved, by: who(query.from) });
    await reply(approved ? "Approved" : "Denied");
  }
}

/** True when `signal` aborted because its time ran out. */
function isTimeout(signal: AbortSignal): boolean {
  const reason: unknown = signal.reason;
  return typeof reason === "object" && reason !== null && "name" in reason && reason.name === "TimeoutError";
}
