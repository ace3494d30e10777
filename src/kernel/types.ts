import type { AsyncStreamEvents, StreamEvent } from "./stream.ts";
import type { Envelope, EnvelopeInput, Prompt } from "./envelope.ts";
import type { ApprovalAnswer, ApprovalRequest } from "./approval.ts";
import type { CompatibilityView, TurnContext } from "./turn-context.ts";

/**
 * The mutable state shared by every stage of one turn: what `loadState` answered, merged.
 * Typed: the keys bub itself keeps are declared here, and a plugin declares its own by
 * merging into this interface (`declare module "bub-ts" { interface TurnState { "acme.where"?: string } }`,
 * see docs/plugins.md). At run time a `loadState` answer is merged whatever its keys, as in
 * the reference. The services of the turn are in its typed context (`TurnContext`); the
 * reference's `_runtime_*` keys show them, read-only ({@link CompatibilityView}).
 */
export interface TurnState extends CompatibilityView {
  session_id?: string;
  /**
   * The id of this turn, set when it starts (a UUID v7; see `src/kernel/correlation.ts`).
   * Every tape entry the turn writes carries it as `meta.turn_id`.
   */
  turn_id?: string;
  /** Context string of the inbound message (`k=v|k=v`). */
  context?: string;
  /** Per-session model override, `provider:model`. */
  model?: string;
  reasoning_effort?: string;
  allowed_skills?: string[];
  /** Who the turn's costs count against (`src/cost/user.ts`); the session when absent. */
  user?: string;
  /** The turn a restart cut off, run again: it resumes from its journal (`src/agent/turn-journal.ts`). */
  retried_after_restart?: boolean;
}

/** What {@link BubFramework.processInbound} returns for one turn. */
export interface TurnResult {
  readonly sessionId: string;
  readonly prompt: Prompt;
  readonly modelOutput: string;
  readonly outbounds: readonly Envelope[];
  readonly state: TurnState;
  /** The turn's typed context (its id, whether a comma command failed, its services). */
  readonly context: TurnContext;
}

/** A model a session may use. */
export interface ModelChoice {
  id: string;
  name?: string;
  description?: string;
  meta?: Record<string, unknown>;
}

/** The models a plugin offers for a session. */
export interface ModelOptions {
  models: ModelChoice[];
  currentModel?: string | null;
}

/** What to do with an inbound message while its session may be busy. */
export interface AdmitDecision {
  readonly action: "process" | "drop" | "follow_up" | "steer" | "collect" | "interrupt";
  readonly reason?: string;
}

const ADMIT_ACTIONS = new Set(["process", "drop", "follow_up", "steer", "collect", "interrupt"]);

/** True for a well-formed {@link AdmitDecision}. */
export function isAdmitDecision(value: unknown): value is AdmitDecision {
  return typeof value === "object" && value !== null && "action" in value && typeof value.action === "string" && ADMIT_ACTIONS.has(value.action);
}

/** The state of a session's turns at the moment a message arrives. */
export interface TurnSnapshot {
  readonly sessionId: string;
  readonly isRunning: boolean;
  readonly runningCount: number;
  readonly pendingCount: number;
  readonly steeringCount: number;
}

/** Which running turn a steering message is for: a session, and a thread within it when the message names one. */
export interface SteeringTarget {
  readonly sessionId: string;
  readonly threadId?: string | null;
}

/** Holds messages meant for a turn that is already running, filed by {@link SteeringTarget}. */
export interface SteeringInbox {
  enqueueMessage(message: Envelope, target: SteeringTarget): void;
  drainMessages(target: SteeringTarget): Envelope[];
  messageCount(target: SteeringTarget): number;
}

/** Receives inbound messages from a channel: envelopes, or what `toEnvelope` makes one of (the handler does). */
export type MessageHandler = (message: Envelope | EnvelopeInput) => Promise<void>;

/** How a channel takes part in `bub gateway` / `bub chat`. */
export type ChannelKind = "channel" | "interface" | "lifecycle";

/** A source and destination of messages (Telegram, the CLI, a plugin's own). */
export interface Channel {
  readonly name: string;
  /** `interface` channels are driven by a person at a terminal; `lifecycle` ones always run. */
  readonly kind?: ChannelKind;
  /** Whether bursts of messages should be debounced into one turn. */
  readonly needsDebounce?: boolean;
  /** A disabled channel is never started. */
  readonly enabled?: boolean;
  start(signal: AbortSignal): Promise<void>;
  stop(): Promise<void>;
  /**
   * Sends an outbound. `context` is the turn's when a turn sends it (its reply, its error
   * reply): `context.message` is the message it answers. Absent outside a turn.
   */
  send(message: Envelope, context?: TurnContext): Promise<void>;
  /**
   * Wraps a turn's stream, e.g. to render it live. `context` is the turn's (absent when a
   * stream is wrapped outside a turn): a channel that shows tool calls itself sets its
   * `toolReporter` while it renders.
   */
  streamEvents?(message: Envelope, stream: AsyncStreamEvents, context?: TurnContext): AsyncIterable<StreamEvent>;
  /** The channel's own admission policy. */
  admitMessage?(args: { sessionId: string; message: Envelope; turn: TurnSnapshot }): AdmitDecision | null | undefined | Promise<AdmitDecision | null | undefined>;
  /** Asks the person behind the turn's chat whether a tool call may run (see ./approval.ts). */
  askApproval?(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer>;
}

/**
 * @deprecated Since plugin API 2.2 the kernel keeps no router; a channel is a plugin (`dispatchOutbound`,
 * `runModelStream`, `admitMessage`, `askApproval`, `quitSession`). Kept for plugins that name the type.
 */
export interface ChannelRouter {
  dispatchOutput(message: Envelope): Promise<boolean>;
  wrapStream(message: Envelope, stream: AsyncStreamEvents): AsyncStreamEvents;
  quit(sessionId: string): Promise<void>;
  admitChannelMessage(sessionId: string, message: Envelope, turn: TurnSnapshot): Promise<AdmitDecision | null>;
  /** Asks through the channel the request's turn came from; null when that channel cannot ask. */
  askApproval?(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer | null>;
}
