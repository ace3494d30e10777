/**
 * Identity links (issue 36): one person's identities on several channels (`telegram:7`,
 * `cli:alice`), proven by a one-time code shown on one channel and typed on the other. These
 * are the pure rules over the stored state (store.ts reads and writes it): codes are
 * single-use, expire after {@link CODE_TTL_MS}, only their hash is kept, and issuing and failed
 * redemptions are rate-limited per identity and overall.
 */
import { createHash, randomInt } from "node:crypto";
import { BubError } from "../../kernel/errors.ts";

/** How long a code can be redeemed. */
export const CODE_TTL_MS = 10 * 60_000;
/** The window of the rate limits. */
export const LIMIT_WINDOW_MS = 10 * 60_000;
/** Codes one identity may ask for per window. */
export const MAX_ISSUED = 5;
/** Wrong codes one identity may type per window (and all identities together: {@link MAX_FAILURES_TOTAL}). */
export const MAX_FAILURES = 5;
export const MAX_FAILURES_TOTAL = 20;
/** Letters and digits that cannot be mistaken for each other. */
const ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
const CODE_LENGTH = 8;

/** One person: the identities linked together (two at least). */
export interface LinkedPerson {
  readonly id: string;
  readonly identities: readonly string[];
  readonly created: string;
}

/** A code waiting to be typed on another channel. */
export interface PendingCode {
  readonly hash: string;
  readonly identity: string;
  readonly expires: number;
}

/** Everything the links store keeps. */
export interface LinkState {
  people: LinkedPerson[];
  codes: PendingCode[];
  /** Times (ms) of recent events per identity: codes issued, wrong codes typed. */
  issued: Record<string, number[]>;
  failures: Record<string, number[]>;
}

/** An empty state. */
export function emptyLinkState(): LinkState {
  return { people: [], codes: [], issued: {}, failures: {} };
}

const hashCode = (code: string): string => createHash("sha256").update(normalizeCode(code)).digest("hex");

/** A typed code as stored: upper case, without spaces or dashes. */
export function normalizeCode(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, "");
}

function recent(times: readonly number[] | undefined, now: number): number[] {
  return (times ?? []).filter((time) => now - time < LIMIT_WINDOW_MS);
}

/** Drops expired codes and old rate-limit entries. */
function prune(state: LinkState, now: number): void {
  state.codes = state.codes.filter((code) => code.expires > now);
  for (const table of [state.issued, state.failures]) {
    for (const [key, times] of Object.entries(table)) {
      const kept = recent(times, now);
      if (kept.length > 0) table[key] = kept;
      else delete table[key];
    }
  }
}

/**
 * A new code for `identity` (its earlier code stops working).
 * @throws BubError `invalid_input` when the identity asked for too many codes lately.
 */
export function issueCode(state: LinkState, identity: string, now = Date.now()): string {
  prune(state, now);
  const issued = recent(state.issued[identity], now);
  if (issued.length >= MAX_ISSUED) throw new BubError("invalid_input", `Too many link codes were asked for ${identity} in the last 10 minutes: wait a few minutes and ask again.`);
  const code = Array.from({ length: CODE_LENGTH }, () => ALPHABET[randomInt(ALPHABET.length)]).join("");
  state.codes = [...state.codes.filter((pending) => pending.identity !== identity), { hash: hashCode(code), identity, expires: now + CODE_TTL_MS }];
  state.issued[identity] = [...issued, now];
  return code;
}

/** The person `identity` belongs to, if any. */
export function personOf(state: LinkState, identity: string): LinkedPerson | null {
  return state.people.find((person) => person.identities.includes(identity)) ?? null;
}

/**
 * Redeems `code` typed by `identity`: links the code's identity and `identity` (the typer
 * joins the person the code's identity belongs to). The code is used up.
 * @throws BubError `invalid_input` for a wrong, expired or used code, a code typed on the
 *   identity that asked for it, or too many wrong codes lately.
 */
export function redeemCode(state: LinkState, code: string, identity: string, now = Date.now()): LinkedPerson {
  prune(state, now);
  const failures = recent(state.failures[identity], now);
  const total = Object.values(state.failures).reduce((sum, times) => sum + recent(times, now).length, 0);
  if (failures.length >= MAX_FAILURES || total >= MAX_FAILURES_TOTAL) {
    throw new BubError("invalid_input", "Too many wrong link codes in the last 10 minutes: wait a few minutes, then ask for a new code.");
  }
  const hash = hashCode(code);
  const pending = state.codes.find((candidate) => candidate.hash === hash);
  if (!pending) {
    state.failures[identity] = [...failures, now];
    throw new BubError("invalid_input", "That link code is wrong, expired or used already: ask for a new one (`bub link` in the terminal, `,link` in a private chat).");
  }
  if (pending.identity === identity) throw new BubError("invalid_input", "That code has to be typed on the other channel, not where it was shown.");
  state.codes = state.codes.filter((candidate) => candidate !== pending);
  return link(state, pending.identity, identity, now);
}

/** Adds `joining` to the person of `owner` (a new person when `owner` has none). */
function link(state: LinkState, owner: string, joining: string, now: number): LinkedPerson {
  removeIdentity(state, joining);
  const existing = personOf(state, owner);
  const person: LinkedPerson = existing
    ? { ...existing, identities: [...existing.identities, joining] }
    : { id: `p_${createHash("sha256").update(`${owner}\n${joining}\n${now}\n${randomInt(2 ** 40)}`).digest("hex").slice(0, 12)}`, identities: [owner, joining], created: new Date(now).toISOString() };
  state.people = [...state.people.filter((candidate) => candidate !== existing), person];
  return person;
}

/** Unlinks one identity (a person left with fewer than two is dropped); true when it was linked. */
export function removeIdentity(state: LinkState, identity: string): boolean {
  const person = personOf(state, identity);
  if (!person) return false;
  const rest = person.identities.filter((candidate) => candidate !== identity);
  state.people = state.people.filter((candidate) => candidate !== person);
  if (rest.length >= 2) state.people.push({ ...person, identities: rest });
  return true;
}

/** Drops a person (all its links); true when there was one with that id. */
export function removePerson(state: LinkState, id: string): boolean {
  const before = state.people.length;
  state.people = state.people.filter((person) => person.id !== id);
  return state.people.length < before;
}
