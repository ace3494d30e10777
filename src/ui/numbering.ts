/**
 * Turn numbers as `bub tape show` gives them (Turn 1, 2, 3 on the whole tape), read from the
 * tape's transcript (`src/tape/transcript.ts`), so the web view and the command line agree.
 */
import type { TapeEntry } from "../kernel/tape-contract.ts";
import { buildTranscript } from "../tape/transcript.ts";

/** Entry id → the number of the turn it belongs to; entries outside any turn are absent. */
export type TurnNumbers = ReadonlyMap<number, number>;

/** The turn number of every entry of a whole tape (`entries` oldest first, from the first). */
export function turnNumbers(entries: readonly TapeEntry[], tape: string): TurnNumbers {
  const numbers = new Map<number, number>();
  for (const turn of buildTranscript(entries, { tape }).turns) {
    if (turn.number === null) continue;
    for (const item of turn.items) numbers.set(item.id, turn.number);
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
