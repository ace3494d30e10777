/**
 * What the channel manager keeps per session: the turns running and the admitted messages
 * waiting for them. A turn is cancelled through the signal its runner hands to
 * `processInbound`; which message a turn answers travels on its context (`context.message`).
 */
import type { Envelope } from "../kernel/envelope.ts";
import type { TurnContext } from "../kernel/turn-context.ts";

const RESOLVED: Promise<void> = Promise.resolve();

/**
 * A session's turns: the ones running, the admitted messages waiting for them (each its own
 * turn), and the messages collected (admission `collect`) to run together as one turn.
 */
export interface SessionTurns {
  readonly sessionId: string;
  readonly active: RunningTurns;
  readonly pending: Envelope[];
  readonly collected: Envelope[];
}

/** A fresh, empty {@link SessionTurns}. */
export function emptySessionTurns(sessionId: string): SessionTurns {
  return { sessionId, active: new RunningTurns(), pending: [], collected: [] };
}

/**
 * One running turn. Its runner hands {@link signal} to `processInbound`, which hands it to
 * every hook of the turn; {@link abort} cancels the turn through it. The `done` promise is
 * made only when asked for (by quit and shutdown).
 */
export class TurnTask {
  readonly message: Envelope;
  readonly turns: SessionTurns;
  cancelled = false;
  /** Cancelled because a newer message of its session took over (admission `interrupt`): its replies are not sent. */
  superseded = false;
  /** The manager stopped waiting for it: it finished, or was cancelled. */
  ended = false;
  /**
   * Resolves once the turn's pipeline has really returned (a cancelled turn still writes
   * its tape after the manager stopped waiting for it); set by the turn runner.
   */
  settled: Promise<void> = RESOLVED;
  #controller: AbortController | null = null;
  #done: PromiseWithResolvers<void> | null = null;

  constructor(message: Envelope, turns: SessionTurns) {
    this.message = message;
    this.turns = turns;
  }

  /** Aborts when the turn is cancelled. */
  get signal(): AbortSignal {
    return (this.#controller ??= new AbortController()).signal;
  }

  abort(reason: unknown): void {
    (this.#controller ??= new AbortController()).abort(reason);
  }

  /** Resolves once the manager stopped waiting for the turn. */
  get done(): Promise<void> {
    if (this.ended) return RESOLVED;
    return (this.#done ??= Promise.withResolvers<void>()).promise;
  }

  /** True when `context` is this turn's (or a subagent's within it): the same message or the same signal. */
  runs(context: TurnContext | undefined): boolean {
    if (!context) return false;
    return context.message === this.message || (this.#controller !== null && context.signal === this.#controller.signal);
  }

  /** Marks the turn ended; false when it already was. */
  end(): boolean {
    if (this.ended) return false;
    this.ended = true;
    this.#done?.resolve();
    return true;
  }
}

/** The running turns of one session, in start order (usually none or one). */
export class RunningTurns {
  readonly #tasks: TurnTask[] = [];

  get size(): number {
    return this.#tasks.length;
  }

  add(task: TurnTask): void {
    this.#tasks.push(task);
  }

  delete(task: TurnTask): void {
    const index = this.#tasks.indexOf(task);
    if (index >= 0) this.#tasks.splice(index, 1);
  }

  /** How many are not cancelled. */
  liveCount(): number {
    return this.#tasks.filter((task) => !task.cancelled).length;
  }

  /** A copy, in start order. */
  toArray(): TurnTask[] {
    return [...this.#tasks];
  }
}
