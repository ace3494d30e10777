/**
 * A replay next to its original (`bub replay`): the replay's session is named
 * `<session>/replay-<UTC time>` and its tape opens with a `replay.start` event naming the
 * original session and tape. The original's page lists its replays (found by that name
 * prefix in the store's name index); a replay's page links back to the original.
 */
import { isRecord } from "../kernel/guards.ts";
import type { TapeEntry, TapeStore } from "../kernel/tape-contract.ts";
import { html, join, type Html } from "./html.ts";
import { sessionPath } from "./pages.ts";
import type { SessionName } from "./sessions.ts";

/** A session tape the page links to. */
export interface RelatedSession {
  readonly tape: string;
  readonly sessionId: string | null;
  /** The replay's `--model` (null: the configured model, or not a replay). */
  readonly model: string | null;
}

/** The original of a replay, and the replays of a session. */
export interface Replays {
  readonly original: RelatedSession | null;
  readonly replays: readonly RelatedSession[];
}

const REPLAY_NAME = /^(.+)\/replay-(\d{8}T\d{6}(?:\d{3})?Z)$/;

/** The `replay.start` event's data among a tape's first entries, or null. */
export function replayStart(entries: readonly TapeEntry[]): Record<string, unknown> | null {
  for (const entry of entries.slice(0, 4)) {
    const data = entry.payload.data;
    if (entry.kind === "event" && entry.payload.name === "replay.start" && isRecord(data)) return data;
  }
  return null;
}

function text(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}

/**
 * The replays of the session on `tape` and, for a replay, its original. `entries` are the
 * tape's; `index` is the store's name index (without one, only the `replay.start` event
 * links a replay back, and no replay is listed).
 */
export async function findReplays(store: TapeStore, tape: string, entries: readonly TapeEntry[], index: ReadonlyMap<string, SessionName> | null): Promise<Replays> {
  const own = index?.get(tape) ?? null;
  const start = replayStart(entries);
  let original: RelatedSession | null = null;
  const ofTape = text(start?.of_tape);
  if (ofTape) {
    original = { tape: ofTape, sessionId: text(start?.of_session) ?? index?.get(ofTape)?.sessionId ?? null, model: null };
  } else if (own && index) {
    const named = REPLAY_NAME.exec(own.sessionId);
    const found = named ? [...index].find(([, name]) => name.sessionId === named[1] && (name.workspace ?? null) === (own.workspace ?? null)) : undefined;
    if (found) original = { tape: found[0], sessionId: found[1].sessionId, model: null };
  }
  const replays: RelatedSession[] = [];
  if (own && index) {
    const prefix = `${own.sessionId}/replay-`;
    for (const [other, name] of index) {
      if (other === tape || !name.sessionId.startsWith(prefix) || !REPLAY_NAME.test(name.sessionId) || (name.workspace ?? null) !== (own.workspace ?? null)) continue;
      const first = await store.fetchAll({ tape: other, limit: 4 }).catch(() => []);
      replays.push({ tape: other, sessionId: name.sessionId, model: text(replayStart(first)?.model) });
    }
    replays.sort((a, b) => (a.sessionId ?? "").localeCompare(b.sessionId ?? ""));
  }
  return { original, replays };
}

/** `2026-12-01 17:40:02 UTC` out of a replay's session id, else the id. */
function replayLabel(session: RelatedSession): string {
  const stamp = REPLAY_NAME.exec(session.sessionId ?? "")?.[2];
  if (!stamp) return session.sessionId ?? session.tape;
  return `${stamp.slice(0, 4)}-${stamp.slice(4, 6)}-${stamp.slice(6, 8)} ${stamp.slice(9, 11)}:${stamp.slice(11, 13)}:${stamp.slice(13, 15)} UTC`;
}

/** The page's lines: `replay of <original>` and `replays: <time> (model), …`; nothing when neither applies. */
export function replayLines(related: Replays): Html {
  const back = related.original
    ? html`<p class="related" id="replay-of">replay of <a href="${sessionPath(related.original.tape)}">${related.original.sessionId ?? html`<code>${related.original.tape}</code>`}</a></p>`
    : "";
  const links = related.replays.map(
    (replay, at) => html`${at > 0 ? ", " : ""}<a href="${sessionPath(replay.tape)}" title="${replay.sessionId ?? replay.tape}">${replayLabel(replay)}</a>${replay.model ? html` <span class="muted">(${replay.model})</span>` : ""}`,
  );
  const list = related.replays.length > 0 ? html`<p class="related" id="replays">replays: ${join(links)}</p>` : "";
  return html`${back}${list}`;
}
