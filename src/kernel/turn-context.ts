/**
 * The typed context of one turn: what every turn hook and every tool may use besides the
 * message and the state. The reference runtime passes these services inside the turn state
 * under `_runtime_*` keys; {@link createTurnState} keeps those keys readable for plugins
 * written against that contract, and nothing else in bub-ts reads them.
 */
import type { Envelope } from "./envelope.ts";
import type { Logger } from "./log.ts";
import type { SettingsStore } from "./settings-contract.ts";
import type { TapeHandle, TapeStore } from "./tape-contract.ts";
import type { SteeringInbox, SteeringTarget, TurnState } from "./types.ts";

/**
 * Receives one start and one success/error per tool call of a turn, in place of the
 * `tool.call.*` log lines (the CLI channel shows one line per call). Hooks may be async.
 */
export interface ToolCallReporter {
  start(name: string, args: Readonly<Record<string, unknown>>): void | Promise<void>;
  success(name: string, result: unknown, elapsedMs: number): void | Promise<void>;
  error(name: string, error: unknown, elapsedMs: number): void | Promise<void>;
}

/** See the module comment. One per turn; the framework builds it once the session is known. */
export interface TurnContext extends SteeringTarget {
  /** The turn's id (a UUID v7), also `state.turn_id` and `meta.turn_id` on its tape entries. */
  readonly turnId: string;
  readonly sessionId: string;
  /**
   * The message the turn answers (the channel that asks for approval, the chat a reply is
   * recorded for); null for a run nobody started through `processInbound`. Read it, do not change it.
   */
  readonly message: Envelope | null;
  /** The thread within the session the message belongs to (`context.thread_id`), if any. */
  readonly threadId: string | null;
  /** The directory the agent works in. */
  readonly workspace: string;
  /** Every plugin's settings, read with `settings.get(section)` once loaded. */
  readonly settings: SettingsStore;
  /** The tape store of the running scope (null outside `running()`). */
  readonly tapes: TapeStore | null;
  /** A logger for the turn (`bub:turn`), routed like the framework's others. */
  readonly log: Logger;
  /** Where messages for this running turn wait (`steer`); null when no plugin provides one. */
  readonly steering: SteeringInbox | null;
  /** Aborts when the turn is cancelled (Ctrl-C in chat, `quit`, the end of a shutdown's grace period). */
  readonly signal: AbortSignal;
  /**
   * The session tape the turn writes, once the agent opened it: a fork of the session's,
   * merged back when the turn ends. Null before (and for turns no agent runs).
   */
  tape: TapeHandle | null;
  /** The agent running the turn, once a plugin's `loadState` named it. Opaque to the kernel. */
  agent: object | null;
  /** Set when a comma command of the turn failed: its reply goes out as an error. */
  commandFailed: boolean;
  /**
   * Who shows the turn's tool calls: set by the channel that renders the turn's stream (the
   * CLI's turn printer) while it does. Null: each call is logged (`tool.call.*` lines).
   */
  toolReporter: ToolCallReporter | null;
}

/** What {@link createTurnContext} needs; the rest starts empty. */
export type TurnContextInit = Omit<TurnContext, "message" | "tape" | "agent" | "commandFailed" | "toolReporter"> & Partial<Pick<TurnContext, "message" | "tape" | "agent" | "toolReporter">>;

/** A new {@link TurnContext}. */
export function createTurnContext(init: TurnContextInit): TurnContext {
  return { message: null, tape: null, agent: null, commandFailed: false, toolReporter: null, ...init };
}

/** A context for a nested run on another session (a subagent): the same services and message (its tool calls shown like the parent's), its own tape. */
export function childTurnContext(parent: TurnContext, sessionId: string, signal: AbortSignal = parent.signal): TurnContext {
  return { ...parent, sessionId, threadId: null, signal, tape: null, commandFailed: false };
}

/** The reference's `_runtime_*` keys and the context field each one shows. */
const COMPAT_KEYS = {
  _runtime_workspace: (context: TurnContext) => context.workspace,
  _runtime_steering_inbox: (context: TurnContext) => context.steering,
  _runtime_thread_id: (context: TurnContext) => context.threadId ?? undefined,
  _runtime_tape: (context: TurnContext) => context.tape ?? undefined,
  _runtime_agent: (context: TurnContext) => context.agent ?? undefined,
} as const;

/** Each compatibility-view state's context (see {@link createTurnState}). */
const contexts = new WeakMap<object, TurnContext>();

/**
 * The prototype of every turn state: the reference's `_runtime_*` keys as getters (not
 * enumerable, so the state's keys and JSON stay as they were) that read the state's
 * context; assigning one (a plugin's `loadState` answer, merged into the state) gives the
 * state its own plain value instead, as in the reference.
 */
const COMPAT_VIEW: object = Object.create(
  Object.prototype,
  Object.fromEntries(
    Object.entries(COMPAT_KEYS).map(([key, read]): [string, PropertyDescriptor] => [
      key,
      {
        enumerable: false,
        get(this: object) {
          const context = contexts.get(this);
          return context ? read(context) : undefined;
        },
        set(this: object, value: unknown) {
          Object.defineProperty(this, key, { value, writable: true, enumerable: true, configurable: true });
        },
      },
    ]),
  ),
);

/**
 * A new turn state for `context`, with the reference's documented `_runtime_*` keys
 * readable as a compatibility view of the context (the one place they are seeded). Its own
 * keys start as `init`'s.
 */
export function createTurnState(context: TurnContext, init: TurnState = {}): TurnState {
  const state: TurnState = Object.create(COMPAT_VIEW);
  contexts.set(state, context);
  return Object.assign(state, init);
}
