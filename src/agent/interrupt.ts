/**
 * What a turn's abort signal carries when the process was told to stop (SIGINT, SIGTERM):
 * the agent writes it to the tape as an `interrupted` event, the command exits with the
 * shell's code for the signal.
 */
import { currentCorrelation } from "../kernel/correlation.ts";
import type { Prompt } from "../kernel/envelope.ts";
import { createLogger } from "../kernel/log.ts";
import { entries } from "../tape/entry.ts";
import type { Tape } from "../tape/tape.ts";

const log = createLogger("bub:agent");

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

/**
 * Runs `body` with a signal Ctrl-C or SIGTERM aborts (its reason a {@link TurnInterrupted});
 * a second signal exits at once with the shell's code for it. Answers `body`'s result and
 * the signal that interrupted it, if one did.
 */
export async function withInterruptSignals<T>(body: (signal: AbortSignal) => Promise<T>): Promise<{ result: T; interrupted: InterruptSignal | null }> {
  const interrupt = new AbortController();
  const onSignal = (signal: InterruptSignal) => {
    if (interrupt.signal.aborted) process.exit(INTERRUPT_EXIT_CODES[signal]);
    interrupt.abort(new TurnInterrupted(signal));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    const result = await body(interrupt.signal);
    return { result, interrupted: interrupt.signal.aborted ? interruptSignalOf(interrupt.signal.reason) : null };
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

/** The prompts of the running step that are not on the tape yet (written if the turn is interrupted). */
export interface PendingPrompts {
  prompts: Prompt[];
}

/**
 * Writes what an interrupted turn has not yet put on the tape (the prompts of the step that
 * was running) and an `interrupted` event `{ signal, reason, date }`. Call when the turn's
 * stream failed because `signal` aborted; a failure to write is logged, not thrown.
 */
export async function recordInterruption(tape: Tape, pending: PendingPrompts, signal: AbortSignal): Promise<void> {
  try {
    for (const prompt of pending.prompts) await tape.append(entries.message({ role: "user", content: prompt }));
    pending.prompts = [];
    const reason = signal.reason;
    await tape.appendEvent("interrupted", {
      signal: interruptSignalOf(reason),
      reason: reason instanceof Error ? reason.message : String(reason ?? "aborted"),
      date: new Date().toISOString(),
    });
  } catch (recordError) {
    log.error(`tape.interrupt.failed tape=${tape.name} turn_id=${currentCorrelation()?.turnId}`, recordError);
  }
}
