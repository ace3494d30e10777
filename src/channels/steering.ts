/**
 * Steering: messages handed to a turn that is already running. The builtin inbox holds them
 * in memory until the agent loop drains them between model steps, filed by
 * {@link SteeringTarget}: the session, and the thread within it when the message names one.
 */
import { threadIdOf, type Envelope } from "../kernel/envelope.ts";
import type { SteeringInbox, SteeringTarget } from "../kernel/types.ts";

/** The target a message of session `sessionId` is steered to: the session and the message's `context.thread_id`, if any. */
export function steeringTargetOf(sessionId: string, message: Envelope): SteeringTarget {
  return { sessionId, threadId: threadIdOf(message) };
}

/** The key a target files its steering messages under: its thread id when it has one, else its session id, else `"default"`. */
export function steeringKey(target: SteeringTarget): string {
  if (target.threadId) return target.threadId;
  return target.sessionId || "default";
}

/**
 * Creates an in-memory {@link SteeringInbox}: one FIFO per key ({@link steeringKey}).
 * Draining removes and returns every message of the key; counting leaves them in place.
 *
 * ```ts
 * const inbox = createSteeringInbox();
 * inbox.enqueueMessage(toEnvelope({ content: "also check the tests" }), { sessionId: "telegram:1" });
 * inbox.drainMessages({ sessionId: "telegram:1" }); // [the message]
 * ```
 */
export function createSteeringInbox(): SteeringInbox {
  const queues = new Map<string, Envelope[]>();
  return {
    enqueueMessage(message, target) {
      const key = steeringKey(target);
      const queue = queues.get(key);
      if (queue) queue.push(message);
      else queues.set(key, [message]);
    },
    drainMessages(target) {
      const key = steeringKey(target);
      const queue = queues.get(key);
      if (!queue) return [];
      queues.delete(key);
      return queue;
    },
    messageCount(target) {
      return queues.get(steeringKey(target))?.length ?? 0;
    },
  };
}

/**
 * Hands `message` to a running turn through the current `running()` scope's steering inbox,
 * recording `reason` in the message's context. False when there is no inbox to take it.
 */
export function steerMessage(framework: { readonly steeringInbox: SteeringInbox | null }, message: Envelope, target: SteeringTarget, reason?: string): boolean {
  const inbox = framework.steeringInbox;
  if (!inbox) return false;
  if (reason !== undefined && !Object.isFrozen(message)) message.context = { ...message.context, steering_reason: reason };
  inbox.enqueueMessage(message, target);
  return true;
}
