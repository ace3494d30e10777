/**
 * Admission of one message: the `resolveSession` hook names its session, the `admitMessage`
 * hook decides what happens to it (`process`, `drop`, `follow_up`, `steer`, `collect` or
 * `interrupt`), and a message
 * that should run now gets its turn started.
 */
import { createLogger } from "../kernel/log.ts";
import type { Envelope } from "../kernel/envelope.ts";
import type { BubFramework } from "../kernel/framework.ts";
import type { AdmitDecision, SteeringTarget } from "../kernel/types.ts";
import type { SessionTurns } from "./session-turns.ts";
import { steerMessage, steeringTargetOf } from "./steering.ts";
import { TurnSuperseded } from "./collect-interrupt.ts";
import type { TurnRunner } from "./turn-runner.ts";

const log = createLogger("bub:channels");

/**
 * Admits messages into a {@link TurnRunner}'s sessions.
 *
 * - no decision, or `process`: the turn starts now, alongside any running turn of the session;
 * - `drop`: the message is discarded (logged);
 * - `follow_up`: it waits for the session's running turn (starts now when none runs);
 * - `steer`: it goes to the running turn's steering inbox; when nothing can take it, it is a follow-up;
 * - `collect`: when a turn runs, it waits with the others that arrive meanwhile, all run as one turn after it;
 * - `interrupt`: the running turn is cancelled (saved as interrupted, its replies withheld) and this one starts.
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

  /** Admits one message and starts its turn when it should run now. Never rejects. */
  async admit(message: Envelope): Promise<void> {
    try {
      const turns = await this.#admit(message);
      if (turns) this.#runner.schedule(turns, message);
    } catch (error) {
      log.error("channel.manager failed to admit a message", error);
    }
  }

  /** The session's turns when the message should start a turn now; null when it was dropped, queued or steered. */
  async #admit(message: Envelope): Promise<SessionTurns | null> {
    let sessionId: string;
    try {
      sessionId = await this.#framework.resolveSession(message);
    } catch (error) {
      log.error("channel.manager could not resolve the session of a message; dropped", error);
      await this.#framework.notifyError("resolve_session", error, message);
      return null;
    }
    if (!Object.isFrozen(message)) message.sessionId = sessionId;
    const turns = this.#runner.sessionTurns(sessionId);
    const target = steeringTargetOf(sessionId, message);
    let decision: AdmitDecision | null;
    try {
      decision = await this.#framework.admitMessage(sessionId, message, this.#runner.snapshot(turns, target));
    } catch (error) {
      log.error(`channel.manager admission failed for session ${sessionId}; processing the message`, error);
      await this.#framework.notifyError("admit_message", error, message);
      return turns;
    }
    if (this.#apply(decision, turns, message, target)) return turns;
    this.#runner.dropIfIdle(turns);
    return null;
  }

  /** True when the message should start a turn now. */
  #apply(decision: AdmitDecision | null, turns: SessionTurns, message: Envelope, target: SteeringTarget): boolean {
    if (decision === null) return true;
    const busy = turns.active.size > 0;
    switch (decision.action) {
      case "process":
        return true;
      case "drop":
        log.info(`channel.manager admission drop session_id=${turns.sessionId}${decision.reason ? ` reason=${decision.reason}` : ""}`);
        return false;
      case "steer":
        if (busy && steerMessage(this.#framework, message, target, decision.reason)) {
          log.info(`channel.manager admission steer session_id=${turns.sessionId}`);
          return false;
        }
        // Nothing can take it now: it waits for the running turn like a follow-up.
        return this.#followUp(turns, message, busy);
      case "follow_up":
        return this.#followUp(turns, message, busy);
      case "collect":
        if (!busy) return true;
        this.#runner.collect(turns, message);
        log.info(`channel.manager admission collect session_id=${turns.sessionId} collected=${turns.collected.length}`);
        return false;
      case "interrupt": {
        if (!busy) return true;
        const cancelled = this.#runner.supersede(turns, message, new TurnSuperseded(message));
        log.info(`channel.manager admission interrupt session_id=${turns.sessionId} cancelled=${cancelled}`);
        return false;
      }
      default:
        log.warn(`channel.manager unknown admission action '${String(decision.action satisfies never)}'; processing the message`);
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
