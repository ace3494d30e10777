/**
 * Steering: messages handed to a turn that is already running. The builtin inbox holds them
 * in memory until the agent loop drains them between model steps; {@link steeringStateOf}
 * is the state the channel manager files and counts a message's steering under.
 */
import { fieldOf, type Envelope } from "../kernel/envelope.ts";
import type { SteeringInbox, TurnState } from "../kernel/types.ts";

function threadIdOf(message: Envelope): string | null {
  const context = fieldOf(message, "context");
  if (typeof context !== "object" || context === null) return null;
  const thread = (context as Record<string, unknown>).thread_id;
  return thread === undefined || thread === null || thread === "" ? null : String(thread);
}

/**
 * The turn state a message of session `sessionId` is admitted with: the session id, and the
 * message's `context.thread_id` (when it has one) as `_runtime_thread_id`.
 */
export function steeringStateOf(sessionId: string, message: Envelope): TurnState {
  const state: TurnState = { session_id: sessionId };
  const thread = threadIdOf(message);
  if (thread) state._runtime_thread_id = thread;
  return state;
}

/**
 * The key a turn state files its steering messages under: the thread id when the turn has
 * one (`_runtime_thread_id`), else the session id, else `"default"`.
 */
export function steeringKey(state: TurnState): string {
  const thread = state._runtime_thread_id;
  if (typeof thread === "string" && thread !== "") return thread;
  if (typeof state.session_id === "string" && state.session_id !== "") return state.session_id;
  return "default";
}

/**
 * Creates an in-memory {@link SteeringInbox}: one FIFO per key ({@link steeringKey}).
 * Draining removes and returns every message of the key; counting leaves them in place.
 *
 * ```ts
 * const inbox = createSteeringInbox();
 * inbox.enqueueMessage({ content: "also check the tests" }, { session_id: "telegram:1" });
 * inbox.drainMessages({ session_id: "telegram:1" }); // [{ content: "also check the tests" }]
 * ```
 */
export function createSteeringInbox(): SteeringInbox {
  const queues = new Map<string, Envelope[]>();
  return {
    enqueueMessage(message, state) {
      const key = steeringKey(state);
      const queue = queues.get(key);
      if (queue) queue.push(message);
      else queues.set(key, [message]);
    },
    drainMessages(state) {
      const key = steeringKey(state);
      const queue = queues.get(key);
      if (!queue) return [];
      queues.delete(key);
      return queue;
    },
    messageCount(state) {
      return queues.get(steeringKey(state))?.length ?? 0;
    },
  };
}

/**
 * Hands `message` to a running turn through its steering inbox (the turn state's, else the
 * current `running()` scope's), recording `reason` in the message's context. False when
 * there is no inbox to take it.
 */
export function steerMessage(framework: { readonly steeringInbox: SteeringInbox | null }, message: Envelope, sessionId: string, state: TurnState, reason?: string): boolean {
  const inbox = (state._runtime_steering_inbox as SteeringInbox | null | undefined) ?? framework.steeringInbox;
  if (!inbox) return false;
  state.session_id ??= sessionId;
  if (reason !== undefined && typeof message === "object" && message !== null && !Object.isFrozen(message)) {
    const context = fieldOf(message, "context");
    (message as Record<string, unknown>).context = { ...(typeof context === "object" && context !== null && !Array.isArray(context) ? context : {}), steering_reason: reason };
  }
  inbox.enqueueMessage(message, state);
  return true;
}
