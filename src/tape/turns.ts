/**
 * Where the turns of a tape begin. An entry written during a turn carries `meta.turn_id`
 * (issue 19); a tape written before those ids marks each turn with a `loop.start` event
 * (an agent turn) or a `command` event (a comma command). The file store counts turns from
 * raw lines with the same rule (see `file-tape-stats.ts`).
 */
import type { TapeEntry } from "../kernel/tape-contract.ts";

/** The events that open a turn on a tape written before turn ids. */
export const LEGACY_TURN_EVENTS: ReadonlySet<string> = new Set(["loop.start", "command"]);

/** The `meta.turn_id` of an entry, or null. */
export function turnIdOf(entry: Pick<TapeEntry, "meta">): string | null {
  const id = entry.meta.turn_id;
  return typeof id === "string" && id !== "" ? id : null;
}

/** True for a `loop.start` or `command` event. */
export function isLegacyTurnStart(entry: Pick<TapeEntry, "kind" | "payload">): boolean {
  return entry.kind === "event" && typeof entry.payload.name === "string" && LEGACY_TURN_EVENTS.has(entry.payload.name);
}

/** What an entry does to the turn sequence: opens a new turn, goes back to an earlier one, or neither (null). */
export type TurnChange = "new" | "resumed" | null;

/**
 * Follows the turns of a tape entry by entry, oldest first. An entry whose `turn_id`
 * differs from the current turn's opens a turn (`"new"`), or goes back to an earlier turn
 * whose entries reached the tape in two parts (`"resumed"`); without a `turn_id`, a
 * `loop.start` or `command` event opens a turn. Other entries without a `turn_id` belong to
 * the turn before them (or to none, at the start of the tape).
 *
 * ```ts
 * const turns = new TurnTracker();
 * const count = entries.filter((entry) => turns.next(entry) === "new").length;
 * ```
 */
export class TurnTracker {
  /** The id of the current turn; a fresh symbol for a turn without one; null before the first. */
  #current: string | symbol | null = null;
  readonly #seen = new Set<string>();

  /** What `entry` does to the turn sequence. */
  next(entry: Pick<TapeEntry, "kind" | "payload" | "meta">): TurnChange {
    return this.nextId(turnIdOf(entry), () => isLegacyTurnStart(entry));
  }

  /** {@link next} from an entry's turn id and, when it has none, whether it is a legacy turn start (asked only then). */
  nextId(turnId: string | null, legacyStart: () => boolean): TurnChange {
    if (turnId !== null) {
      if (turnId === this.#current) return null;
      this.#current = turnId;
      if (this.#seen.has(turnId)) return "resumed";
      this.#seen.add(turnId);
      return "new";
    }
    if (!legacyStart()) return null;
    this.#current = Symbol("turn");
    return "new";
  }
}

/** How many turns `entries` (a whole tape, oldest first) hold. */
export function countTurns(entries: readonly TapeEntry[]): number {
  const tracker = new TurnTracker();
  let turns = 0;
  for (const entry of entries) if (tracker.next(entry) === "new") turns++;
  return turns;
}
