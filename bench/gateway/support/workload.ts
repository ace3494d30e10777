/**
 * The closed-loop burst the gateway benches feed a gateway (floor.ts, memory.ts): N private
 * chats x M messages, each chat a user who sends the next message once the previous one is
 * answered (the chats run in parallel). Each message carries a token `q<chat>x<seq>` that the
 * fake model echoes, so every sendMessage names the message it answers: answered / lost (no
 * answer by the deadline) / duplicated (answered twice) / order kept (answers of a chat
 * arrive in the order of its messages). Only calls the fake answered with success count as
 * answers: a call it failed (bench/delivery/faults.ts) is counted as `failedCalls`.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { answerToken, FIRST_CHAT, sendToken, type RunningGateway } from "./gateway.ts";

/** What a burst did. */
export interface BurstResult {
  sent: number;
  answered: number;
  lost: number;
  duplicated: number;
  outOfOrder: number;
  /** sendMessage calls that name no message (errors, notices). */
  otherMessages: number;
  /** sendMessage calls the fake Bot API answered with a failure (not delivered). */
  failedCalls: number;
  /** First message pushed to last answer, in ms. */
  wallMs: number;
}

/** What a burst needs of its target: one gateway, or several sharing one Bot API (bench/cluster). */
export type BurstTarget = Pick<RunningGateway, "telegram" | "exited" | "assertRunning">;

/**
 * Runs the burst on `gateway` and resolves 250 ms after the last answer (tape writes after
 * the answer, late duplicates), or at the deadline: `deadlineMs` after the first message,
 * by default max(60 s, M x 15 s). The chats are `firstChat` to `firstChat + chats - 1`
 * (another `firstChat` makes a round of new chats, memory.ts `rounds`).
 */
export async function closedLoop(gateway: BurstTarget, chats: number, messages: number, deadlineMs = Math.max(60_000, messages * 15_000), firstChat = FIRST_CHAT): Promise<BurstResult> {
  const { telegram } = gateway;
  const total = chats * messages;
  const next = new Map<number, number>(); // chat -> seq expected next (1-based)
  const seen = new Set<string>();
  const result: BurstResult = { sent: 0, answered: 0, lost: 0, duplicated: 0, outOfOrder: 0, otherMessages: 0, failedCalls: 0, wallMs: 0 };
  const send = (chat: number, seq: number) => {
    result.sent++;
    sendToken(telegram, chat, seq);
  };
  const start = performance.now();
  let lastAnswerAt = start;
  for (let index = 0; index < chats; index++) {
    next.set(firstChat + index, 1);
    send(firstChat + index, 1);
  }
  const deadline = start + deadlineMs;
  let scanned = telegram.calls.length; // calls before the burst (a warm-up) are not its answers
  while (result.answered < total && performance.now() < deadline && !gateway.exited()) {
    await sleep(5);
    const calls = telegram.calls;
    for (; scanned < calls.length; scanned++) {
      const call = calls[scanned]!;
      if (call.method !== "sendMessage") continue;
      if (call.status !== 200) {
        result.failedCalls++;
        continue;
      }
      const token = answerToken(call.payload);
      if (!token) {
        result.otherMessages++;
        continue;
      }
      if (seen.has(token.key)) {
        result.duplicated++;
        continue;
      }
      seen.add(token.key);
      result.answered++;
      lastAnswerAt = performance.now();
      if (next.get(token.chat) !== token.seq) result.outOfOrder++;
      next.set(token.chat, token.seq + 1);
      if (token.seq < messages) send(token.chat, token.seq + 1);
    }
  }
  result.wallMs = lastAnswerAt - start;
  await sleep(250);
  for (const call of telegram.calls.slice(scanned)) {
    const token = call.method === "sendMessage" && call.status === 200 ? answerToken(call.payload) : undefined;
    if (token && seen.has(token.key)) result.duplicated++;
  }
  gateway.assertRunning("during the burst");
  result.lost = total - result.answered;
  return result;
}

/** `answered/total | lost | dup | order` of a burst. */
export function burstSummary(result: BurstResult, total: number): string {
  return [
    `${result.answered}/${total} answered`,
    `lost ${result.lost}`,
    `dup ${result.duplicated}`,
    `order ${result.outOfOrder === 0 ? "kept" : `broken ${result.outOfOrder}x`}`,
    `wall ${(result.wallMs / 1000).toFixed(2)} s`,
    `other sendMessage ${result.otherMessages}`,
  ].join(" | ");
}

/**
 * An open-loop steady load (latency.ts, bench/cluster/latency.ts): `rate` messages a second
 * for `seconds`, message i to private chat FIRST_CHAT + (i mod `chats`) with seq
 * floor(i / chats) + 1. Sets `pushedAt[q<chat>x<seq>]` to when each was pushed; resolves
 * with how far behind schedule the generator fell at most and when it pushed the last one.
 */
export async function steadyLoad(target: BurstTarget, load: { rate: number; seconds: number; chats: number }, pushedAt: Map<string, number>): Promise<{ lateMs: number; lastPushAt: number }> {
  const total = load.rate * load.seconds;
  const start = performance.now();
  let sent = 0;
  let lateMs = 0;
  let lastPushAt = start;
  while (sent < total) {
    const now = performance.now();
    const due = Math.min(total, Math.floor(((now - start) * load.rate) / 1000) + 1);
    for (; sent < due; sent++) {
      lateMs = Math.max(lateMs, now - (start + (sent * 1000) / load.rate));
      const chat = FIRST_CHAT + (sent % load.chats);
      const seq = Math.floor(sent / load.chats) + 1;
      pushedAt.set(`q${chat}x${seq}`, performance.now());
      sendToken(target.telegram, chat, seq);
    }
    lastPushAt = performance.now();
    target.assertRunning("during the steady load");
    await sleep(1);
  }
  return { lateMs, lastPushAt };
}
