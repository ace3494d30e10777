/**
 * Turn numbers as `bub tape show` gives them (Turn 1, 2, 3 on the whole tape). They follow
 * the rule `buildTranscript` (`src/tape/transcript.ts`) numbers turns by, with the same
 * {@link TurnTracker}: a new turn takes the next number, a turn whose entries reached the
 * tape in two parts keeps its number, and entries before the first turn have none. Only the
 * numbers are worked out, not the transcript's items, so a 10,000-entry tape costs about what
 * counting its turns costs (test/ui/views.test.ts checks both agree).
 */
import type { TapeEntry } from "../kernel/tape-contract.ts";
import { turnIdOf, TurnTracker } from "../tape/turns.ts";

/** Entry id → the number of the turn it belongs to; entries outside any turn are absent. */
export type TurnNumbers = ReadonlyMap<number, number>;

/** The turn number of every entry of a whole tape (`entries` oldest first, from the first). */
export function turnNumbers(entries: readonly TapeEntry[]): TurnNumbers {
  const numbers = new Map<number, number>();
  const tracker = new TurnTracker();
  const byTurnId = new Map<string, number>();
  let turns = 0;
  let current: number | null = null;
  for (const entry of entries) {
    const change = tracker.next(entry);
    const turnId = change === null ? null : turnIdOf(entry);
    if (change === "new") {
      current = ++turns;
      if (turnId !== null) byTurnId.set(turnId, current);
    } else if (change === "resumed") current = turnId === null ? null : (byTurnId.get(turnId) ?? null);
    if (current !== null) numbers.set(entry.id, current);
  }
  return numbers;
}

/** The number of the turn a block of entries belongs to (its first numbered entry's), or null. */
export function blockNumber(entries: readonly TapeEntry[], numbers: TurnNumbers | undefined): number | null {
  if (!numbers) return null;
  for (const entry of entries) {
    const number = numbers.get(entry.id);
    if (number !== undefined) return number;
  }
  return null;
}
