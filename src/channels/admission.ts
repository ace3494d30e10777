/**
 * The builtin turn-admission policy: a channel's own `admitMessage` answer when it has one,
 * else the `BUB_ADMISSION` setting (`concurrent`, `follow_up` or `steer`).
 */
import type { BubFramework } from "../kernel/framework.ts";
import type { Envelope } from "../kernel/envelope.ts";
import type { AdmitDecision, TurnSnapshot } from "../kernel/types.ts";

/** The values of the `BUB_ADMISSION` setting. */
export type AdmissionPolicy = "concurrent" | "follow_up" | "steer";

/** The configured `BUB_ADMISSION` policy (`concurrent` when the setting is not loaded or unknown). */
export function admissionPolicy(framework: BubFramework): AdmissionPolicy {
  const value = framework.settings.getValue("admission", "concurrent");
  return value === "follow_up" || value === "steer" ? value : "concurrent";
}

/** The decision a policy stands for; `concurrent` is "no decision" (turns run side by side). */
export function decisionForPolicy(policy: AdmissionPolicy): AdmitDecision | null {
  if (policy === "concurrent") return null;
  return { action: policy, reason: `BUB_ADMISSION=${policy}` };
}

/**
 * What the builtin `admitMessage` hook answers: the bound channel router's (the channel's
 * own policy) when it has one, else the `BUB_ADMISSION` default.
 */
export async function builtinAdmission(framework: BubFramework, args: { sessionId: string; message: Envelope; turn: TurnSnapshot }): Promise<AdmitDecision | null> {
  const router = framework.router;
  const own = router ? await router.admitChannelMessage(args.sessionId, args.message, args.turn) : null;
  return own ?? decisionForPolicy(admissionPolicy(framework));
}
