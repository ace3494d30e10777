/**
 * What the channel manager keeps per session: the turns running and the admitted messages
 * waiting for them, and the async scope that tells code which turn (which message) it runs
 * in. A turn is cancelled through the signal its runner hands to `processInbound`, not
 * through that scope.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Envelope } from "../kernel/envelope.ts";

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

/**
 * The turn the current async context runs in, entered by whoever starts a turn (the turn
 * runner, `bub run`, the ACP server). It answers two questions only: which message the
 * running turn answers ({@link currentTurnMessage}) and whether a task is the caller's own
 * ({@link isCurrentTurn}). It is not how a turn is cancelled: the turn's `signal` travels in
 * `processInbound`'s options and the hook arguments.
 */
const turnScope = new AsyncLocalStorage<TurnTask>();

/** Runs `body` as part of `task`'s turn (see {@link currentTurnMessage}). */
export function runInTurn<A extends unknown[], R>(task: TurnTask, body: (...args: A) => R, ...args: A): R {
  return turnScope.run(task, body, ...args);
}

/** The message of the turn the caller runs in, or null outside one. */
export function currentTurnMessage(): Envelope | null {
  return turnScope.getStore()?.message ?? null;
}

/**
 * True when the caller runs in a turn a newer message superseded (admission `interrupt`):
 * whatever that turn still tries to send is withheld.
 */
export function currentTurnSuperseded(): boolean {
  return turnScope.getStore()?.superseded ?? false;
}

/** True when the caller runs in `task`'s turn (`quit` from inside a turn spares it). */
export function isCurrentTurn(task: TurnTask): boolean {
  return turnScope.getStore() === task;
}
