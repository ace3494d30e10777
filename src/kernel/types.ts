import type { AsyncStreamEvents, StreamEvent } from "./stream.ts";
import type { Envelope, Prompt } from "./envelope.ts";
import type { ApprovalAnswer, ApprovalRequest } from "./approval.ts";
import type { TapeHandle } from "./tape-contract.ts";

/**
 * The mutable state shared by every stage of one turn. Keys starting with `_` are the
 * runtime's own (`_runtime_workspace`, `_runtime_steering_inbox`, ...), everything else is
 * free for plugins.
 */
export interface TurnState {
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
  _runtime_workspace?: string;
  _runtime_steering_inbox?: SteeringInbox | null;
  /** The session tape of the tool call in progress: set before `beforeToolCall` runs, so tool hooks can read and write it. */
  _runtime_tape?: TapeHandle;
  [key: string]: unknown;
}

/** What {@link BubFramework.processInbound} returns for one turn. */
export interface TurnResult {
  readonly sessionId: string;
  readonly prompt: Prompt;
  readonly modelOutput: string;
  readonly outbounds: readonly Envelope[];
  readonly state: TurnState;
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
  readonly action: "process" | "drop" | "follow_up" | "steer";
  readonly reason?: string;
}

const ADMIT_ACTIONS = new Set(["process", "drop", "follow_up", "steer"]);

/** True for a well-formed {@link AdmitDecision}. */
export function isAdmitDecision(value: unknown): value is AdmitDecision {
  return typeof value === "object" && value !== null && ADMIT_ACTIONS.has((value as { action?: string }).action ?? "");
}

/** The state of a session's turns at the moment a message arrives. */
export interface TurnSnapshot {
  readonly sessionId: string;
  readonly isRunning: boolean;
  readonly runningCount: number;
  readonly pendingCount: number;
  readonly steeringCount: number;
}

/** Holds messages meant for a turn that is already running. */
export interface SteeringInbox {
  enqueueMessage(message: Envelope, state: TurnState): void;
  drainMessages(state: TurnState): Envelope[];
  messageCount(state: TurnState): number;
}

/** Receives inbound envelopes from a channel. */
export type MessageHandler = (message: Envelope) => Promise<void>;

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
  send(message: Envelope): Promise<void>;
  /** Wraps a turn's stream, e.g. to render it live. */
  streamEvents?(message: Envelope, stream: AsyncStreamEvents): AsyncIterable<StreamEvent>;
  /** The channel's own admission policy. */
  admitMessage?(args: { sessionId: string; message: Envelope; turn: TurnSnapshot }): AdmitDecision | null | undefined | Promise<AdmitDecision | null | undefined>;
  /** Asks the person behind the turn's chat whether a tool call may run (see ./approval.ts). */
  askApproval?(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer>;
}

/** What the channel manager offers the framework once bound. */
export interface ChannelRouter {
  dispatchOutput(message: Envelope): Promise<boolean>;
  wrapStream(message: Envelope, stream: AsyncStreamEvents): AsyncStreamEvents;
  quit(sessionId: string): Promise<void>;
  admitChannelMessage(sessionId: string, message: Envelope, turn: TurnSnapshot): Promise<AdmitDecision | null>;
  /** Asks through the channel the request's turn came from; null when that channel cannot ask. */
  askApproval?(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer | null>;
}
