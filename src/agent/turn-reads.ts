/**
 * Each turn's one read of its session tape (see `tape/tape-snapshot.ts`), by its turn
 * context: the builtin `loadState` makes it when it reads the session switches, and the run
 * of the same turn reads its anchor and context through it, so a turn reads its tape once.
 */
import type { TapeStore } from "../kernel/tape-contract.ts";
import type { TurnContext } from "../kernel/turn-context.ts";
import type { Tape } from "../tape/tape.ts";
import type { Tapes } from "../tape/tapes.ts";

/** A turn's snapshot of its session tape, with the tape and store it was made for. */
export interface TurnRead {
  readonly name: string;
  readonly store: TapeStore;
  /** The session tape over the snapshot. */
  readonly tape: Tape;
  /** Adds what was appended to the tape since it was read (called before each later step). */
  readonly refresh: () => Promise<void>;
}

/** The open turns' reads (weakly held: a turn that never runs leaves nothing behind). */
export class TurnReads {
  readonly #reads = new WeakMap<TurnContext, TurnRead>();

  /** The turn's read of `tape` (a persisted session tape of `tapes`), made on first use. */
  of(turn: TurnContext, tape: Tape, tapes: Tapes): TurnRead {
    const found = this.#reads.get(turn);
    if (found && found.name === tape.name && found.store === tape.store) return found;
    const read: TurnRead = { name: tape.name, store: tape.store, ...tapes.snapshot(tape, turn.message?.tapeEnd) };
    this.#reads.set(turn, read);
    return read;
  }

  /** Forgets the turn's read once its run has merged. */
  end(turn: TurnContext): void {
    this.#reads.delete(turn);
  }
}
