/**
 * Which session a schedule tool may name from a turn, and which channel and chat a job's
 * turn is delivered to. The rule is the subagent's (docs/security.md, "Sessions kept
 * apart"): a channel turn may only use its own session unless `subagent_cross_session` is on.
 */
import { BubError } from "../kernel/errors.ts";
import type { TurnState } from "../kernel/types.ts";
import { assertSessionAllowed, isLocalTurn, crossSessionAllowed, type SessionAccess } from "../tools/builtin/session-access.ts";

/** Where a job's turn goes. */
export interface ScheduleTarget {
  readonly sessionId: string;
  readonly channel: string;
  readonly chatId: string;
}

/** The value of `key` in a `k=v|k=v` context line, or null. */
export function contextValue(context: string | undefined, key: string): string | null {
  if (context === undefined) return null;
  for (const part of context.split("|")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at) === key) return part.slice(at + 1);
  }
  return null;
}

/** The turn's own session, channel and chat, from its state; null when the turn does not say. */
export function currentTarget(state: TurnState): ScheduleTarget | null {
  const sessionId = state.session_id?.trim() ?? "";
  const channel = contextValue(state.context, "channel")?.replace(/^\$/, "") ?? "";
  const chatId = contextValue(state.context, "chat_id") ?? "";
  return sessionId && channel && chatId ? { sessionId, channel, chatId } : null;
}

/** `<channel>:<chat id>` as a target, or null for a session id of another shape. */
function parseChatSession(sessionId: string): ScheduleTarget | null {
  const match = /^([A-Za-z][\w.-]*):(.+)$/s.exec(sessionId);
  return match ? { sessionId, channel: match[1], chatId: match[2] } : null;
}

/**
 * The target of `schedule.add`: the turn's own session when `session` is empty or names it,
 * else `session` parsed as `<channel>:<chat id>` — refused from a channel turn (unless
 * `subagent_cross_session`), and refused for the local `cli` channel, which no gateway serves.
 * @throws BubError `invalid_input` or `tool` saying what to name instead.
 */
export function resolveTarget(session: string | null | undefined, access: SessionAccess): ScheduleTarget {
  const { state } = access;
  const own = currentTarget(state);
  const wanted = session?.trim() ?? "";
  let target: ScheduleTarget | null;
  if (wanted === "" || wanted === own?.sessionId) {
    target = own;
    if (!target) throw new BubError("invalid_input", "schedule.add: this turn has no channel and chat to deliver to; name a session such as telegram:<chat id>");
  } else {
    assertSessionAllowed("schedule.add", wanted, access);
    target = parseChatSession(wanted);
    if (!target) throw new BubError("invalid_input", `schedule.add: session '${wanted}' does not name a channel and chat; use <channel>:<chat id>, e.g. telegram:123456`);
    if (!isLocalTurn(state) && !crossSessionAllowed(access)) {
      throw new BubError("tool", `schedule.add: outside the local CLI a turn may only schedule into its own session ('${own?.sessionId ?? "(none)"}')`);
    }
  }
  if (target.channel === "cli") {
    throw new BubError("invalid_input", "schedule.add: the local cli channel is not served by 'bub gateway', so nothing would answer there; name a gateway chat's session such as telegram:<chat id>");
  }
  return target;
}

/**
 * Whether this turn may see and remove `sessionId`'s jobs: a local CLI turn (or one with
 * `subagent_cross_session`) may touch every job, a channel turn only its own session's.
 */
export function mayTouch(sessionId: string, access: SessionAccess): boolean {
  if (seesAllSessions(access)) return true;
  const own = access.state.session_id;
  return typeof own === "string" && own.trim() === sessionId;
}

/** A local CLI turn, or any turn with `subagent_cross_session` on: it may touch every session's jobs. */
export function seesAllSessions(access: SessionAccess): boolean {
  return isLocalTurn(access.state) || crossSessionAllowed(access);
}
