/**
 * Admission of one message: the `resolveSession` hook names its session, the `admitMessage`
 * hook decides what happens to it (`process`, `drop`, `follow_up` or `steer`), and a message
 * that should run now gets its turn started.
 */
import { createLogger } from "../kernel/log.ts";
import type { Envelope } from "../kernel/envelope.ts";
import { isThenable, type Awaitable } from "../kernel/runtime.ts";
import type { BubFramework } from "../kernel/framework.ts";
import type { AdmitDecision, TurnState } from "../kernel/types.ts";
import { ChannelMessage } from "./message.ts";
import type { SessionTurns } from "./session-turns.ts";
import { steeringStateOf } from "./steering.ts";
import type { TurnRunner } from "./turn-runner.ts";

const log = createLogger("bub:channels");

function setSessionId(message: Envelope, sessionId: string): void {
  if (typeof message !== "object" || message === null || Object.isFrozen(message)) return;
  if (message instanceof ChannelMessage) message.sessionId = sessionId;
  else (message as Record<string, unknown>).session_id = sessionId;
}

/**
 * Admits messages into a {@link TurnRunner}'s sessions. Synchronous for as long as the
 * `resolveSession` and `admitMessage` hooks are.
 *
 * - no decision, or `process`: the turn starts now, alongside any running turn of the session;
 * - `drop`: the message is discarded (logged);
 * - `follow_up`: it waits for the session's running turn (starts now when none runs);
 * - `steer`: it goes to the running turn's steering inbox; when nothing can take it, it is a follow-up.
 *
 * A failing `resolveSession` drops the message and a failing `admitMessage` processes it;
 * both are reported to `onError` (stages `resolve_session` and `admit_message`).
 */
export class TurnAdmission {
  readonly #framework: BubFramework;
  readonly #runner: TurnRunner;

  constructor(framework: BubFramework, runner: TurnRunner) {
    this.#framework = framework;
    this.#runner = runner;
  }

  /**
   * Admits one message and starts its turn when it should run now. Returns a promise only
   * when admission took one; never throws or rejects.
   */
  admit(message: Envelope): Promise<void> | undefined {
    let turns: Awaitable<SessionTurns | null>;
    try {
      turns = this.#admit(message);
      if (!isThenable(turns)) {
        if (turns) this.#runner.schedule(turns, message);
        return undefined;
      }
    } catch (error) {
      log.error("channel.manager failed to admit a message", error);
      return undefined;
    }
    return Promise.resolve(turns).then(
      (admitted) => {
        if (admitted) this.#runner.schedule(admitted, message);
      },
      (error: unknown) => log.error("channel.manager failed to admit a message", error),
    ).catch((error: unknown) => log.error("channel.manager failed to admit a message", error));
  }

  /** The session's turns when the message should start a turn now; null when it was dropped, queued or steered. */
  #admit(message: Envelope): Awaitable<SessionTurns | null> {
    let sessionId: Awaitable<string>;
    try {
      sessionId = this.#framework.sessionOf(message);
    } catch (error) {
      return this.#unresolved(error, message);
    }
    if (!isThenable(sessionId)) return this.#admitIn(sessionId, message);
    return Promise.resolve(sessionId).then(
      (resolved) => this.#admitIn(resolved, message),
      (error: unknown) => this.#unresolved(error, message),
    );
  }

  async #unresolved(error: unknown, message: Envelope): Promise<null> {
    log.error("channel.manager could not resolve the session of a message; dropped", error);
    await this.#framework.notifyError("resolve_session", error, message);
    return null;
  }

  #admitIn(sessionId: string, message: Envelope): Awaitable<SessionTurns | null> {
    setSessionId(message, sessionId);
    const turns = this.#runner.sessionTurns(sessionId);
    const state = steeringStateOf(sessionId, message);
    let decision: Awaitable<AdmitDecision | null>;
    try {
      decision = this.#framework.admissionOf(sessionId, message, this.#runner.snapshot(turns, state));
    } catch (error) {
      return this.#admissionFailed(error, turns, message);
    }
    if (!isThenable(decision)) return this.#decide(decision, turns, message, state);
    return Promise.resolve(decision).then(
      (decided) => this.#decide(decided, turns, message, state),
      (error: unknown) => this.#admissionFailed(error, turns, message),
    );
  }

  async #admissionFailed(error: unknown, turns: SessionTurns, message: Envelope): Promise<SessionTurns> {
    log.error(`channel.manager admission failed for session ${turns.sessionId}; processing the message`, error);
    await this.#framework.notifyError("admit_message", error, message);
    return turns;
  }

  #decide(decision: AdmitDecision | null, turns: SessionTurns, message: Envelope, state: TurnState): SessionTurns | null {
    if (this.#apply(decision, turns, message, state)) return turns;
    this.#runner.dropIfIdle(turns);
    return null;
  }

  /** True when the message should start a turn now. */
  #apply(decision: AdmitDecision | null, turns: SessionTurns, message: Envelope, state: TurnState): boolean {
    if (decision === null) return true;
    const busy = turns.active.size > 0;
    switch (decision.action) {
      case "process":
        return true;
      case "drop":
        log.info(`channel.manager admission drop session_id=${turns.sessionId}${decision.reason ? ` reason=${decision.reason}` : ""}`);
        return false;
      case "steer":
        if (busy && this.#framework.steerMessage(message, turns.sessionId, state, decision.reason)) {
          log.info(`channel.manager admission steer session_id=${turns.sessionId}`);
          return false;
        }
        // Nothing can take it now: it waits for the running turn like a follow-up.
        return this.#followUp(turns, message, busy);
      case "follow_up":
        return this.#followUp(turns, message, busy);
      default:
        log.warn(`channel.manager unknown admission action '${String((decision as { action: unknown }).action)}'; processing the message`);
        return true;
    }
  }

  #followUp(turns: SessionTurns, message: Envelope, busy: boolean): boolean {
    // Invariant: a session with pending messages always has a running turn that will start them.
    if (!busy) return true;
    turns.pending.push(message);
    log.info(`channel.manager admission follow_up session_id=${turns.sessionId} pending=${turns.pending.length}`);
    return false;
  }
}
