/**
 * The typed context of one turn: what every turn hook and every tool may use besides the
 * message and the state. The reference runtime passes these services inside the turn state
 * under `_runtime_*` keys; {@link createTurnState} keeps those keys readable (read-only) for plugins
 * written against that contract, and nothing else in bub-ts reads them.
 */
import type { Envelope } from "./envelope.ts";
import type { SettingsStore } from "./settings-contract.ts";
import type { TapeHandle, TapeStore } from "./tape-contract.ts";
import type { SteeringInbox, SteeringTarget, TurnState } from "./types.ts";
import { isRecord } from "./guards.ts";
import { createLogger, type Logger } from "./log.ts";

const log = createLogger("bub:hooks");

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

/** The reference's `_runtime_*` keys on a turn state: read-only views of its context, for plugins written against the reference (new ones read the context). */
export type CompatibilityView = { readonly [K in keyof typeof COMPAT_KEYS]?: Exclude<ReturnType<(typeof COMPAT_KEYS)[K]>, undefined> };

/** Each compatibility-view state's context (see {@link createTurnState}). */
const contexts = new WeakMap<object, TurnContext>();

/**
 * The prototype of every turn state: the reference's `_runtime_*` keys as read-only getters
 * (not enumerable, so the state's keys and JSON stay as they were) that read the state's
 * context. Having no setter, an assignment throws a `TypeError` in strict code, and the
 * merge of `loadState` answers skips them ({@link mergeLoadedStates}).
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
      },
    ]),
  ),
);

/**
 * A new turn state for `context`, with the reference's documented `_runtime_*` keys
 * readable as a compatibility view of the context (the one place they are seeded). Its own
 * keys start as `init`'s.
 */
export function createTurnState(context: TurnContext, init: Omit<TurnState, keyof CompatibilityView> = {}): TurnState {
  const state: TurnState = Object.create(COMPAT_VIEW);
  contexts.set(state, context);
  return Object.assign(state, init);
}

const isString = (value: unknown): boolean => typeof value === "string";
/** What bub's own keys hold (see `TurnState`): a `loadState` value of another type is left out, null clears the key. */
const OWN_KEYS: ReadonlyMap<string, (value: unknown) => boolean> = new Map([
  ...["session_id", "turn_id", "context", "model", "reasoning_effort", "user"].map((key): [string, (value: unknown) => boolean] => [key, isString]),
  ["allowed_skills", (value) => Array.isArray(value) && value.every(isString)],
  ["retried_after_restart", (value) => typeof value === "boolean"],
]);

/**
 * The `loadState` answers (in call order, highest precedence first, with the plugin that gave
 * each) merged into one object, as the reference does: lowest precedence first, so a higher
 * one wins a key. Plain objects are merged whatever their keys (a JavaScript plugin's, one
 * written against the reference); checked once, here, so what reads the state can trust its
 * type: an answer that is not an object, a `_runtime_*` key (read-only on the state) and a
 * value of the wrong type for one of bub's own keys are left out, with a warning naming the plugin.
 */
export function mergeLoadedStates(answers: readonly unknown[], plugins: readonly string[]): Record<PropertyKey, unknown> {
  const merged: Record<PropertyKey, unknown> = {};
  for (let index = answers.length - 1; index >= 0; index--) {
    const answer = answers[index];
    if (answer === null || answer === undefined) continue;
    if (!isRecord(answer)) {
      log.warn(`hook.load_state_not_an_object adapter=${plugins[index]}`);
      continue;
    }
    let skipped = "";
    for (const key in answer) {
      if (!Object.hasOwn(answer, key)) continue;
      const value = answer[key];
      const valid = OWN_KEYS.get(key);
      if ((key.startsWith("_runtime_") && Object.hasOwn(COMPAT_KEYS, key)) || (valid && value !== null && value !== undefined && !valid(value))) skipped += skipped ? `,${key}` : key;
      else merged[key] = valid && value === null ? undefined : value;
    }
    if (skipped) log.warn(`hook.load_state_keys_skipped keys=${skipped} adapter=${plugins[index]}`);
    // A symbol key (a plugin's private one) is merged as it is.
    for (const symbol of Object.getOwnPropertySymbols(answer)) if (Object.prototype.propertyIsEnumerable.call(answer, symbol)) merged[symbol] = Reflect.get(answer, symbol);
  }
  return merged;
}
