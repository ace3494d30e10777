/**
 * What a turn's abort signal carries when the process was told to stop (SIGINT, SIGTERM):
 * the agent writes it to the tape as an `interrupted` event, the command exits with the
 * shell's code for the signal.
 */

/** The signals that interrupt a turn. */
export type InterruptSignal = "SIGINT" | "SIGTERM";

/** Exit codes for an interrupted command: 128 + the signal number, as a shell reports them. */
export const INTERRUPT_EXIT_CODES: Readonly<Record<InterruptSignal, number>> = Object.freeze({ SIGINT: 130, SIGTERM: 143 });

/**
 * The abort reason of a turn interrupted by a signal. Named `AbortError` so code that
 * checks for cancellation by name treats it as one.
 *
 * ```ts
 * const controller = new AbortController();
 * process.once("SIGINT", () => controller.abort(new TurnInterrupted("SIGINT")));
 * ```
 */
export class TurnInterrupted extends Error {
  readonly signal: InterruptSignal;

  constructor(signal: InterruptSignal) {
    super(`interrupted (${signal})`);
    this.name = "AbortError";
    this.signal = signal;
  }
}

/** The signal an abort reason names: a {@link TurnInterrupted}'s, else null. */
export function interruptSignalOf(reason: unknown): InterruptSignal | null {
  return reason instanceof TurnInterrupted ? reason.signal : null;
}
