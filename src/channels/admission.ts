/**
 * The channel manager's turn-admission default: a channel's own `admitMessage` answer when
 * it has one, else the `BUB_ADMISSION` setting (`concurrent`, `follow_up`, `steer`, `collect` or
 * `interrupt`).
 */
import type { BubFramework } from "../kernel/framework.ts";
import type { Envelope } from "../kernel/envelope.ts";
import type { AdmitDecision, Channel, TurnSnapshot } from "../kernel/types.ts";

/** The values of the `BUB_ADMISSION` setting. */
export type AdmissionPolicy = "concurrent" | "follow_up" | "steer" | "collect" | "interrupt";

const POLICIES: ReadonlySet<string> = new Set<AdmissionPolicy>(["concurrent", "follow_up", "steer", "collect", "interrupt"]);

function isAdmissionPolicy(value: unknown): value is AdmissionPolicy {
  return typeof value === "string" && POLICIES.has(value);
}

/**
 * The channel's own admission policy for a message (its `admitMessage` answer), or null when
 * it has none or gives no decision.
 */
export async function channelOwnAdmission(channel: Channel | undefined, sessionId: string, message: Envelope, turn: TurnSnapshot): Promise<AdmitDecision | null> {
  return (await channel?.admitMessage?.({ sessionId, message, turn })) ?? null;
}

/** The configured `BUB_ADMISSION` policy (`concurrent` when the setting is not loaded or unknown). */
export function admissionPolicy(framework: Pick<BubFramework, "settings">): AdmissionPolicy {
  const value = framework.settings.getValue("admission", "concurrent");
  return isAdmissionPolicy(value) ? value : "concurrent";
}

// One frozen decision per policy: a hook that changed it would change every later message's.
const DECISIONS: Readonly<Record<AdmissionPolicy, AdmitDecision | null>> = {
  concurrent: null,
  follow_up: Object.freeze({ action: "follow_up", reason: "BUB_ADMISSION=follow_up" }),
  steer: Object.freeze({ action: "steer", reason: "BUB_ADMISSION=steer" }),
  collect: Object.freeze({ action: "collect", reason: "BUB_ADMISSION=collect" }),
  interrupt: Object.freeze({ action: "interrupt", reason: "BUB_ADMISSION=interrupt" }),
};

/** The decision a policy stands for; `concurrent` is "no decision" (turns run side by side). */
export function decisionForPolicy(policy: AdmissionPolicy): AdmitDecision | null {
  return DECISIONS[policy];
}

/**
 * What the channel manager's `admitMessage` hook answers when no plugin above it decided:
 * the message's channel's own policy when it has one, else the `BUB_ADMISSION` default.
 */
export async function channelAdmission(framework: Pick<BubFramework, "settings">, channel: Channel | undefined, args: { sessionId: string; message: Envelope; turn: TurnSnapshot }): Promise<AdmitDecision | null> {
  return (await channelOwnAdmission(channel, args.sessionId, args.message, args.turn)) ?? decisionForPolicy(admissionPolicy(framework));
}

/**
 * The `BUB_ADMISSION` policy the shared inbound queue (`BUB_DATABASE_URL`) cannot honour, or
 * null: its turns are jobs that any gateway may run, so a message cannot be merged into or
 * cancel another gateway's turn (`collect`, `interrupt`). The gateway refuses to start with it.
 */
export function sharedQueueRefusal(framework: Pick<BubFramework, "settings">): string | null {
  const policy = admissionPolicy(framework);
  if (policy !== "collect" && policy !== "interrupt") return null;
  return `BUB_ADMISSION=${policy} does not work with the shared inbound queue (BUB_DATABASE_URL) — set BUB_ADMISSION to follow_up or steer, or unset BUB_DATABASE_URL`;
}
