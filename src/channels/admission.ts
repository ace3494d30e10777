/**
 * The builtin turn-admission policy: a channel's own `admitMessage` answer when it has one,
 * else the `BUB_ADMISSION` setting (`concurrent`, `follow_up` or `steer`).
 */
import type { BubFramework } from "../kernel/framework.ts";
import type { Envelope } from "../kernel/envelope.ts";
import { isThenable, type Awaitable } from "../kernel/runtime.ts";
import type { AdmitDecision, Channel, TurnSnapshot } from "../kernel/types.ts";

/** The values of the `BUB_ADMISSION` setting. */
export type AdmissionPolicy = "concurrent" | "follow_up" | "steer";

/**
 * A channel router that can answer a channel's own admission without a promise when the
 * channel answers synchronously (the `ChannelManager` does). `builtinAdmission` uses
 * it when the bound router has it, else the router's `admitChannelMessage`.
 */
export interface ImmediateChannelAdmission {
  channelAdmission(sessionId: string, message: Envelope, turn: TurnSnapshot): Awaitable<AdmitDecision | null>;
}

/**
 * The channel's own admission policy for a message (its `admitMessage` answer), or null when
 * it has none or gives no decision. Synchronous unless the channel answers with a promise.
 */
export function channelOwnAdmission(channel: Channel | undefined, sessionId: string, message: Envelope, turn: TurnSnapshot): Awaitable<AdmitDecision | null> {
  if (!channel?.admitMessage) return null;
  const decision = channel.admitMessage({ sessionId, message, turn });
  if (isThenable(decision)) return Promise.resolve(decision).then((answer) => answer ?? null);
  return decision ?? null;
}

/** The configured `BUB_ADMISSION` policy (`concurrent` when the setting is not loaded or unknown). */
export function admissionPolicy(framework: BubFramework): AdmissionPolicy {
  const value = framework.settings.getValue("admission", "concurrent");
  return value === "follow_up" || value === "steer" ? value : "concurrent";
}

// Decisions are only read, so each policy has one (frozen) object instead of one per message.
const DECISIONS: Readonly<Record<AdmissionPolicy, AdmitDecision | null>> = {
  concurrent: null,
  follow_up: Object.freeze({ action: "follow_up", reason: "BUB_ADMISSION=follow_up" }),
  steer: Object.freeze({ action: "steer", reason: "BUB_ADMISSION=steer" }),
};

/** The decision a policy stands for; `concurrent` is "no decision" (turns run side by side). */
export function decisionForPolicy(policy: AdmissionPolicy): AdmitDecision | null {
  return DECISIONS[policy];
}

/**
 * What the builtin `admitMessage` hook answers: the bound channel router's (the channel's
 * own policy) when it has one, else the `BUB_ADMISSION` default. Synchronous unless the
 * channel's own policy answers with a promise (or the router only offers a promise).
 */
export function builtinAdmission(framework: BubFramework, args: { sessionId: string; message: Envelope; turn: TurnSnapshot }): Awaitable<AdmitDecision | null> {
  const router = framework.router;
  if (router === null) return decisionForPolicy(admissionPolicy(framework));
  const immediate = router as Partial<ImmediateChannelAdmission>;
  const own = typeof immediate.channelAdmission === "function" ? immediate.channelAdmission(args.sessionId, args.message, args.turn) : router.admitChannelMessage(args.sessionId, args.message, args.turn);
  if (isThenable(own)) return Promise.resolve(own).then((decision) => decision ?? decisionForPolicy(admissionPolicy(framework)));
  return own ?? decisionForPolicy(admissionPolicy(framework));
}
