/**
 * Sessions kept apart: which sessions a tool may name from a turn. In a channel turn (any
 * turn that is not the local CLI's, e.g. a Telegram chat in `bub gateway`) a tool may not
 * name another chat's session (`<channel>:<chat id>` of a known channel) unless the
 * `subagent_cross_session` setting (`BUB_SUBAGENT_CROSS_SESSION`) is true, nor a linked
 * person's shared session (`person:<id>`) other than its own. See
 * docs/security.md, "Sessions kept apart".
 */
import { BubError } from "../../kernel/errors.ts";
import type { TurnState } from "../../kernel/types.ts";
import type { ToolContext } from "../tool.ts";

/** The channel of local turns (`bub run`, `bub chat`). */
export const LOCAL_CHANNEL = "cli";
/** Channels whose sessions are `<channel>:<chat id>` even when the turn names none of them. */
const BUILTIN_CHANNELS = ["cli", "telegram"];
/**
 * The prefix of a linked person's shared session (`person:<id>`, src/channels/links/): a
 * private session like a chat's, though not a channel. A turn runs in it only when its sender
 * is that person and its channel shares linked sessions.
 */
const PERSON_PREFIX = "person";
/** The setting that lifts the rule. */
export const CROSS_SESSION_SETTING = "subagent_cross_session";
export const CROSS_SESSION_ENV = "BUB_SUBAGENT_CROSS_SESSION";

/** The `<channel>` of a `<channel>:<rest>` session id, lower-cased, or null. */
function channelPrefixOf(sessionId: string): string | null {
  const match = /^([A-Za-z][\w.-]*):(.+)$/s.exec(sessionId.trim());
  return match && match[2].trim() !== "" ? match[1].toLowerCase() : null;
}

/**
 * Every channel the turn is known to come from: each `channel=$<name>` of its context line
 * (stamped by the channel on every message) and the `<channel>:` of its session id (not
 * `person:`, which names a linked person, not a channel).
 */
export function turnChannelsOf(state: TurnState): string[] {
  const channels = new Set<string>();
  if (state.context !== undefined) {
    for (const match of state.context.matchAll(/(?:^|\|)channel=\$([^|]*)/g)) {
      const name = match[1].trim().toLowerCase();
      if (name) channels.add(name);
    }
  }
  if (state.session_id !== undefined) {
    const prefix = channelPrefixOf(state.session_id);
    if (prefix && prefix !== PERSON_PREFIX) channels.add(prefix);
  }
  return [...channels];
}

/**
 * True for a local CLI turn: every channel the turn names is `cli` (and it names at least
 * one). A turn that names no channel at all counts as a channel turn, so the rule fails closed.
 */
export function isLocalTurn(state: TurnState): boolean {
  const channels = turnChannelsOf(state);
  return channels.length > 0 && channels.every((channel) => channel === LOCAL_CHANNEL);
}

/** Who asks to reach a session: the tool context's turn state, and its agent for the setting. */
export type SessionAccess = Pick<ToolContext, "state" | "agent">;

/** True when the `subagent_cross_session` setting is on. */
export function crossSessionAllowed(access: SessionAccess): boolean {
  const value = access.agent?.configValue(CROSS_SESSION_SETTING);
  return value === true || (typeof value === "string" && ["1", "true", "yes", "on"].includes(value.trim().toLowerCase()));
}

/**
 * The chat session `sessionId` names when it is another chat's than the turn's: a
 * `<channel>:<chat id>` of a known channel (`cli`, `telegram`, or a channel this turn
 * comes from), or a linked person's `person:<id>`, other than the turn's own session. Null
 * otherwise.
 */
export function otherChatSession(sessionId: string, state: TurnState): string | null {
  const prefix = channelPrefixOf(sessionId);
  if (prefix === null) return null;
  const known = new Set([...BUILTIN_CHANNELS, PERSON_PREFIX, ...turnChannelsOf(state)]);
  if (!known.has(prefix)) return null;
  const current = state.session_id?.trim() ?? "";
  return sessionId.trim() === current ? null : sessionId;
}

/**
 * Refuses `sessionId` when a channel turn names another chat's session and
 * `subagent_cross_session` is off; `tool` names the asking tool in the message.
 * @throws BubError `tool` naming the session and the setting.
 */
export function assertSessionAllowed(tool: string, sessionId: string, access: SessionAccess): void {
  const { state } = access;
  const other = otherChatSession(sessionId, state);
  if (other === null || isLocalTurn(state) || crossSessionAllowed(access)) return;
  const current = state.session_id ? `'${state.session_id}'` : "(none)";
  throw new BubError(
    "tool",
    `${tool}: session '${other}' belongs to another chat and this turn's session is ${current}; ` +
      `outside the local CLI a turn may only use its own session, 'temp', 'inherit' or names that are not <channel>:<chat id>. ` +
      `Set ${CROSS_SESSION_ENV}=true (${CROSS_SESSION_SETTING}: true in config.yml) to allow it.`,
  );
}
