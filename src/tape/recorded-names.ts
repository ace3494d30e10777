/**
 * What every tape store remembers of its name index (`recordTapeName`): the tapes it put
 * there already, so a session's later turns do not write the same record again.
 */
import { RecentSet } from "../kernel/recent-set.ts";

/**
 * How many tapes a store remembers having recorded, most recently used first. A gateway
 * meets new chats for ever, so the memory is bounded: a tape forgotten (used again after
 * this many others) is recorded once more, which is a harmless repeated line in the file
 * store's index (the first line wins) and an insert that changes nothing in a database.
 */
export const REMEMBERED_TAPE_NAMES = 4096;

/** A new, empty memory of recorded tapes, keeping at most `max` (default {@link REMEMBERED_TAPE_NAMES}). */
export function recordedTapeNames(max = REMEMBERED_TAPE_NAMES): RecentSet<string> {
  return new RecentSet<string>(max);
}
