/**
 * Runs admitted messages as turns, per session: starts a turn with its task's signal, and
 * when it ends moves the steering it left unread to the front of the session's pending
 * queue and starts the next pending message. Cancels turns for `quit` and at the end of a
 * shutdown, by aborting that signal.
 */
import { createLogger } from "../kernel/log.ts";
import type { Envelope } from "../kernel/envelope.ts";
import type { BubFramework } from "../kernel/framework.ts";
import type { SteeringTarget, TurnResult, TurnSnapshot } from "../kernel/types.ts";
import type { TurnContext } from "../kernel/turn-context.ts";
import { emptySessionTurns, TurnTask, type SessionTurns } from "./session-turns.ts";
import { steeringTargetOf } from "./steering.ts";
import { mergeCollected } from "./collect-interrupt.ts";
import { TurnSlots } from "./turn-slots.ts";

const log = createLogger("bub:channels");

/**
 * The abort reason of a turn the manager cancels (at shutdown after the grace period, or on
 * quit): named `AbortError`, as cancellations are, so the turn is logged as cancelled, not failed.
 */
function turnCancelled(): Error {
  const error = new Error("turn cancelled");
  error.name = "AbortError";
  return error;
}

/** Tells the message's lifespan how its turn ended; a failing callback is logged. */
function settleLifespan(message: Envelope, outcome: "done" | "cancelled"): void {
  try {
    message.lifespan?.settled?.(outcome);
  } catch (error) {
    log.error("channel.manager lifespan.settled failed", error);
  }
}

/** How a task's turn ended for its lifespan: a turn a newer message superseded is over (`done`), not left to run again. */
function outcomeOf(task: TurnTask): "done" | "cancelled" {
  return task.cancelled && !task.superseded ? "cancelled" : "done";
}

/** Options of {@link TurnRunner}. */
export interface TurnRunnerOptions {
  /** Run turns with streaming model output. Defaults to the `BUB_STREAM_OUTPUT` setting, read per turn. */
  streamOutput?: boolean;
  /** Called when a turn ended and its session had nothing more to run. */
  onSettled?: () => void;
  /** Turns running at once across all sessions, the rest waiting in order; 0: no bound. Defaults to the `BUB_MAX_CONCURRENT_TURNS` setting (64). */
  maxConcurrentTurns?: number;
}

const DEFAULT_MAX_CONCURRENT_TURNS = 64;

/**
 * The sessions with running turns or pending messages, and the turns themselves. A session
 * is known while it has either; once both are gone it is forgotten.
 */
export class TurnRunner {
  readonly #framework: BubFramework;
  readonly #options: TurnRunnerOptions;
  readonly #sessions = new Map<string, SessionTurns>();
  /** The signals of turns a newer message superseded (admission `interrupt`): what they still send is withheld. */
  readonly #supersededSignals = new WeakSet<AbortSignal>();
  /** The message of each running turn that streams its output, by the turn's signal. */
  readonly #streaming = new WeakMap<AbortSignal, Envelope>();
  #slots: TurnSlots | null = null;

  constructor(framework: BubFramework, options: TurnRunnerOptions = {}) {
    this.#framework = framework;
    this.#options = options;
  }

  /** How many sessions have running turns or pending messages. */
  get sessionCount(): number {
    return this.#sessions.size;
  }

  /** The session's turns, registering the session when it is not known. */
  sessionTurns(sessionId: string): SessionTurns {
    let turns = this.#sessions.get(sessionId);
    if (!turns) {
      turns = emptySessionTurns(sessionId);
      this.#sessions.set(sessionId, turns);
    }
    return turns;
  }

  /** Forgets the session when nothing of it runs or waits. */
  dropIfIdle(turns: SessionTurns): void {
    if (turns.active.size === 0 && turns.pending.length === 0 && turns.collected.length === 0 && this.#sessions.get(turns.sessionId) === turns) this.#sessions.delete(turns.sessionId);
  }

  /** The snapshot admission sees; `target` is where the message would be steered. */
  snapshot(turns: SessionTurns, target: SteeringTarget): TurnSnapshot {
    const inbox = this.#framework.steeringInbox;
    const runningCount = turns.active.liveCount();
    return {
      sessionId: turns.sessionId,
      isRunning: runningCount > 0,
      runningCount,
      pendingCount: turns.pending.length + turns.collected.length,
      steeringCount: inbox ? inbox.messageCount(target) : 0,
    };
  }

  /** A session's current snapshot, known or not. */
  snapshotOf(sessionId: string): TurnSnapshot {
    return this.snapshot(this.#sessions.get(sessionId) ?? emptySessionTurns(sessionId), { sessionId });
  }

  /**
   * True when `context` is a turn a newer message superseded (admission `interrupt`): what it
   * still tries to send is withheld.
   */
  superseded(context: TurnContext | undefined): boolean {
    return context !== undefined && this.#supersededSignals.has(context.signal);
  }

  /** The message of the turn `signal` belongs to, when the runner started it with streaming output; else null. */
  streamingMessage(signal: AbortSignal): Envelope | null {
    return this.#streaming.get(signal) ?? null;
  }

  /**
   * Starts a turn for the message; with `after`, once that has
   * resolved (the turn counts as the session's running turn meanwhile).
   */
  schedule(turns: SessionTurns, message: Envelope, after?: Promise<void>): void {
    // The session may have gone idle (and been forgotten) since admission: re-register it.
    if (this.#sessions.get(turns.sessionId) !== turns) turns = this.sessionTurns(turns.sessionId);
    const task = new TurnTask(message, turns);
    turns.active.add(task);
    if (!after) {
      TurnRunner.#runTurn(this, task);
      return;
    }
    // Until it starts, what a later interrupt waits for is what this one waits for.
    task.settled = after;
    void after.then(() => TurnRunner.#runTurn(this, task));
  }

  /**
   * Admission `interrupt`: cancels the session's running turns with `reason` (except the
   * caller's own) and starts a turn for `message` once their pipelines have returned, so
   * their tapes are written (an `interrupted` event each) before the new turn reads the tape.
   * Whatever the cancelled turns still try to send is withheld. Returns how many it cancelled.
   */
  supersede(turns: SessionTurns, message: Envelope, reason: unknown): number {
    if (this.#sessions.get(turns.sessionId) !== turns) turns = this.sessionTurns(turns.sessionId);
    const previous = turns.active.toArray();
    let cancelled = 0;
    for (const task of previous) {
      if (task.cancelled) continue;
      task.superseded = true;
      this.#supersededSignals.add(task.signal);
      this.#cancel(task, reason);
      cancelled++;
    }
    const after = Promise.all(previous.map((task) => task.settled)).then(() => undefined);
    this.schedule(turns, message, after);
    return cancelled;
  }

  /**
   * Admission `collect`: keeps the message to run, with the others collected while the
   * session's turn runs, as one turn after it (see {@link mergeCollected}).
   */
  collect(turns: SessionTurns, message: Envelope): void {
    if (this.#sessions.get(turns.sessionId) !== turns) turns = this.sessionTurns(turns.sessionId);
    turns.collected.push(message);
  }

  /** Runs a turn; a failed turn just ends: processInbound already logged it and told onError. */
  static #runTurn(runner: TurnRunner, task: TurnTask): void {
    // Without a free slot the turn waits (still the session's running turn, so its order holds).
    if (runner.#turnSlots().acquire(() => TurnRunner.#start(runner, task))) TurnRunner.#start(runner, task);
  }

  /**
   * Runs the turn's pipeline while it holds a slot, with the task's signal (every hook of the
   * turn gets it); a turn cancelled while waiting gives its slot on.
   */
  static #start(runner: TurnRunner, task: TurnTask): void {
    const slots = runner.#turnSlots();
    if (task.cancelled) {
      settleLifespan(task.message, outcomeOf(task));
      slots.release();
      return;
    }
    let turn: Promise<TurnResult>;
    try {
      if (runner.#streamOutput()) runner.#streaming.set(task.signal, task.message);
      turn = runner.#framework.processInbound(task.message, { signal: task.signal });
    } catch (error) {
      turn = Promise.reject(error);
    }
    task.settled = turn.then(
      () => {
        slots.release();
        settleLifespan(task.message, "done");
        runner.#finish(task);
      },
      () => {
        slots.release();
        settleLifespan(task.message, outcomeOf(task));
        runner.#finish(task);
      },
    );
  }

  #turnSlots(): TurnSlots {
    if (this.#slots) return this.#slots;
    const configured = this.#options.maxConcurrentTurns ?? this.#framework.settings.getValue("max_concurrent_turns", DEFAULT_MAX_CONCURRENT_TURNS);
    return (this.#slots = new TurnSlots(typeof configured === "number" && Number.isFinite(configured) ? configured : DEFAULT_MAX_CONCURRENT_TURNS));
  }

  #streamOutput(): boolean {
    return this.#options.streamOutput ?? this.#framework.settings.getValue("stream_output", false) === true;
  }

  /** The turn ended (or was cancelled): promote its unread steering, start the session's next message. */
  #finish(task: TurnTask): void {
    if (!task.end()) return; // cancelled earlier; what it did after that is not waited for
    const turns = task.turns;
    turns.active.delete(task);
    try {
      if (task.superseded) log.info(`channel.manager turn interrupted by a newer message session_id=${turns.sessionId}`);
      else if (task.cancelled) log.info(`channel.manager turn cancelled session_id=${turns.sessionId}`);
      else this.#promoteSteering(turns, task.message);
    } finally {
      this.#next(turns);
    }
  }

  /** Steering messages the turn left unread go to the front of the session's pending queue. */
  #promoteSteering(turns: SessionTurns, message: Envelope): void {
    const inbox = this.#framework.steeringInbox;
    if (!inbox) return;
    const leftovers = inbox.drainMessages(steeringTargetOf(turns.sessionId, message));
    if (leftovers.length === 0) return;
    log.info(`channel.manager ${leftovers.length} unread steering message(s) queued as follow-ups session_id=${turns.sessionId}`);
    turns.pending.unshift(...leftovers);
  }

  /** Starts the session's next pending message once nothing of it runs (the collected ones, merged, after those already pending). */
  #next(turns: SessionTurns): void {
    if (turns.active.size === 0 && turns.collected.length > 0) {
      const merged = mergeCollected(turns.collected.splice(0));
      log.info(`channel.manager admission collect: running the collected message(s) as one turn session_id=${turns.sessionId}`);
      turns.pending.push(merged);
    }
    if (turns.active.size === 0 && turns.pending.length > 0) {
      const next = turns.pending.shift();
      if (next) {
        this.schedule(turns, next);
        return;
      }
    }
    this.dropIfIdle(turns);
    this.#options.onSettled?.();
  }

  #cancel(task: TurnTask, reason: unknown = turnCancelled()): void {
    task.cancelled = true;
    task.abort(reason);
    // Stop waiting for it at once (in a microtask, as a settled turn would).
    queueMicrotask(() => this.#finish(task));
  }

  /** Forgets a session's pending messages and cancels its running turns (except `caller`'s, the turn asking). */
  async quit(sessionId: string, caller?: TurnContext): Promise<void> {
    const turns = this.#sessions.get(sessionId);
    if (!turns) return;
    turns.pending.length = 0;
    turns.collected.length = 0;
    const cancelled = turns.active.toArray().filter((task) => !task.runs(caller));
    for (const task of cancelled) this.#cancel(task);
    await Promise.all(cancelled.map((task) => task.done));
    this.dropIfIdle(turns);
    log.info(`channel.manager quit session_id=${sessionId}, cancelled ${cancelled.length} tasks`);
  }

  /**
   * Forgets every pending message (logging each session that had some) and cancels every
   * running turn; resolves with how many were cancelled once none is waited for.
   */
  async cancelAll(): Promise<number> {
    let cancelled = 0;
    for (const turns of this.#sessions.values()) {
      const waiting = turns.pending.length + turns.collected.length;
      if (waiting > 0) log.warn(`channel.manager shutdown: ${waiting} pending message(s) not run session_id=${turns.sessionId}`);
      turns.pending.length = 0;
      turns.collected.length = 0;
      for (const task of turns.active.toArray()) {
        this.#cancel(task);
        cancelled++;
      }
    }
    await Promise.all([...this.#sessions.values()].flatMap((turns) => turns.active.toArray().map((task) => task.done)));
    return cancelled;
  }

  /**
   * Forgets every pending message and cancels every running turn with `reason` (its signal's
   * abort reason); resolves with how many were cancelled once their pipelines have returned,
   * so what they write on the way out (the tape) is written.
   */
  async interruptAll(reason: unknown): Promise<number> {
    const running: TurnTask[] = [];
    for (const turns of this.#sessions.values()) {
      turns.pending.length = 0;
      turns.collected.length = 0;
      running.push(...turns.active.toArray());
    }
    for (const task of running) this.#cancel(task, reason);
    await Promise.all(running.map((task) => task.settled.catch(() => undefined)));
    return running.length;
  }

  /** Forgets every session. */
  clear(): void {
    this.#sessions.clear();
  }
}
