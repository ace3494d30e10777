/** Writing an interrupted turn to the tape: what it had not recorded yet, then an `interrupted` event. */
import type { Prompt } from "../kernel/envelope.ts";
import { currentCorrelation } from "../kernel/correlation.ts";
import { createLogger } from "../kernel/log.ts";
import type { StreamEvent } from "../kernel/stream.ts";
import { entries } from "../tape/entry.ts";
import type { Tape } from "../tape/tape.ts";
import { interruptSignalOf } from "./interrupt.ts";

const log = createLogger("bub:agent");

/** The prompts of the running step that are not on the tape yet (written if the turn is interrupted). */
export interface PendingPrompts {
  prompts: Prompt[];
}

/**
 * Runs `body`; when it fails because `signal` aborted, writes what the turn has not yet
 * put on the tape (the prompts of the step that was running) and an `interrupted` event
 * `{ signal, reason, date }`, then rethrows.
 */
export async function* recordingInterrupts(body: AsyncGenerator<StreamEvent, void, undefined>, tape: Tape, pending: PendingPrompts, signal: AbortSignal): AsyncGenerator<StreamEvent, void, undefined> {
  try {
    yield* body;
  } catch (error) {
    if (signal.aborted) {
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
    throw error;
  }
}
