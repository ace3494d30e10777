/**
 * The builtin `resolveSession`'s use of identity links: a linked person's private messages
 * share one session (`person:<id>`) on the channels whose `share_linked_sessions` setting is
 * on. Group chats never join it; a session chosen on purpose is kept. A plugin that answers
 * `resolveSession` itself replaces this.
 */
import type { Envelope } from "../../kernel/envelope.ts";
import type { SettingsStore } from "../../kernel/settings-contract.ts";
import { hasDefaultSession, PERSON_SESSION_PREFIX, privateIdentity } from "./identity.ts";
import { cliSettings } from "./settings.ts";
import type { LinkStore } from "./store.ts";
import { linkStoreFromSettings } from "./store-from-settings.ts";

/** What {@link linkedSession} reads. */
export interface LinkedSessionSource {
  readonly settings: SettingsStore;
  readonly home: string;
}

const stores = new WeakMap<LinkedSessionSource, LinkStore>();

/** The links store of a framework (one per framework object; file, SQLite or PostgreSQL as configured). */
export function linkStoreOf(source: LinkedSessionSource): LinkStore {
  let store = stores.get(source);
  if (!store) stores.set(source, (store = linkStoreFromSettings(source.settings, source.home)));
  return store;
}

/** Whether `channel` shares linked sessions (`<channel>.share_linked_sessions`, default off). */
async function shares(source: LinkedSessionSource, channel: string): Promise<boolean> {
  if (channel === "cli") return (await source.settings.load(cliSettings)).share_linked_sessions;
  return source.settings.getValue(`${channel}.share_linked_sessions`, false) === true;
}

/**
 * The shared session of the message's sender, or null (not shared on this channel, not a
 * private chat, an explicit session, or a sender linked to nobody).
 *
 * ```ts
 * const session = (await linkedSession(framework, message)) ?? `${message.channel}:${message.chatId}`;
 * ```
 */
export async function linkedSession(source: LinkedSessionSource, message: Envelope): Promise<string | null> {
  if (!hasDefaultSession(message) || !(await shares(source, message.channel))) return null;
  const identity = privateIdentity(message);
  if (identity === null) return null;
  const person = await linkStoreOf(source).personOf(identity);
  return person ? `${PERSON_SESSION_PREFIX}${person.id}` : null;
}
