/**
 * The turns of queued messages in this process: a job's message is handed to the channel
 * manager like any other, and the job ends when its turn ended and its replies were handed
 * to the delivery ledger. Each reply of a queued turn goes to the ledger under a key (the
 * message's key and the reply's index in the turn), which the ledger keeps: a run of the
 * same message again (a retry after its process died, a dead letter retried by hand) hands
 * the same keys, and the ledger drops the replies it had already (see
 * ../delivery/postgres-store.ts). A message that arrives for a session whose turn runs here
 * may be steered into that turn (see {@link QueuedTurns.offerSteering}).
 *
 * Channel-agnostic: the channel hands its received item to its own handlers inside
 * {@link QueuedTurns.run}, and wraps its message handler with {@link QueuedTurns.handOver}
 * (naming the item the message came from: that is how its job is found) and its send with
 * {@link QueuedTurns.sendRecorded}.
 */
import type { DeliveryHandoff } from "../delivery/types.ts";
import { createLogger } from "../../kernel/log.ts";
import type { Envelope, TurnLifespan } from "../../kernel/envelope.ts";
import type { AdmitDecision, MessageHandler, SteeringInbox, SteeringTarget, TurnSnapshot } from "../../kernel/types.ts";
import { steeringTargetOf, steerMessage } from "../steering.ts";
import type { SteerNotice } from "./job.ts";
import type { InboundQueue, QueuedJob } from "./inbound-queue.ts";

const log = createLogger("bub:queue");

/** What steering across processes needs of the framework. */
export interface SteeringFramework {
  readonly steeringInbox: SteeringInbox | null;
  admitMessage(sessionId: string, message: Envelope, turn: TurnSnapshot): Promise<AdmitDecision | null>;
}

/** The part of {@link InboundQueue} the turns use. */
export type TurnsQueue = Pick<InboundQueue, "waiting" | "finishWaiting" | "complete">;

/**
 * What a queued turn's reply is delivered with: its key (message key and reply index), which
 * the ledger must keep and refuse a second time (that is what keeps a re-run's replies from
 * going out twice), and the {@link DeliveryHandoff} that lets the job's completion confirm the
 * turn's last reply (it takes the last reply of a turn that ended; every other is declined).
 */
export interface RecordedOrigin {
  key: string;
  handoff?: DeliveryHandoff;
}

/** How long an ended turn's job waits for its last reply to be sent, to confirm it too; then it completes alone. */
const LAST_REPLY_WAIT_MS = 5_000;

/** A message steered into a turn of this process. */
interface Steered {
  readonly id: string;
  readonly message: Envelope;
  readonly target: SteeringTarget;
}

/** One job's message in this process, from the hand-over to the end of its turn. */
class JobRun {
  readonly job: QueuedJob;
  /** Only parsing the message (for steering), not running it. */
  readonly probe: boolean;
  captured: Envelope | null = null;
  /** The message reached the channel manager. */
  handed = false;
  entered = false;
  ended = false;
  readonly outcome = Promise.withResolvers<"done" | "cancelled">();
  replies = 0;
  /** This turn's replies are handed to the ledger one at a time, in order. */
  replying: Promise<void> = Promise.resolve();
  readonly steered: Steered[] = [];
  /** Steered messages the turn read: their jobs end with this one. */
  consumed: string[] = [];
  /** The index of the reply the delivery ledger queued last with this run's handoff. */
  queuedIndex = -1;
  /** Replies whose send the ledger reported (confirmed by it, or handed to the completion). */
  readonly sentIndexes = new Set<number>();
  /** The last reply, sent, waiting for the completion to confirm it: its ledger id, and the answer to the ledger. */
  lastSent: { id: number; done: PromiseWithResolvers<boolean> } | null = null;
  /** Resolved when the last reply is handed over, or when waiting for it should stop (a shutdown). */
  readonly wake = Promise.withResolvers<void>();
  /** The completion has started: later sends are confirmed by the ledger. */
  completing = false;

  constructor(job: QueuedJob, probe: boolean) {
    this.job = job;
    this.probe = probe;
  }

  end(outcome: "done" | "cancelled"): void {
    if (this.ended) return;
    this.ended = true;
    this.outcome.resolve(outcome);
  }
}

/** Options of {@link QueuedTurns}. */
export interface QueuedTurnsOptions {
  queue: TurnsQueue;
  /** For steering across processes; without it a message for a running session waits for its turn to end. */
  framework?: SteeringFramework;
  /** How long a handed message may take to start its turn (debounce, a free slot) before its job is let go; default 180 s. */
  startWithinMs?: number;
}

/** See the module comment. */
export class QueuedTurns {
  readonly #queue: TurnsQueue;
  readonly #framework: SteeringFramework | null;
  readonly #startWithinMs: number;
  /** The job of each item being handed to the channel's handlers, by the item (the object the job's payload holds). */
  readonly #handing = new WeakMap<object, JobRun>();
  /** The job of each lifespan this process wrapped. */
  readonly #byLifespan = new WeakMap<TurnLifespan, JobRun>();
  /** Per session, the job whose turn runs here now. */
  readonly #running = new Map<string, JobRun>();
  readonly #runs = new Set<JobRun>();

  constructor(options: QueuedTurnsOptions) {
    this.#queue = options.queue;
    this.#framework = options.framework ?? null;
    this.#startWithinMs = options.startWithinMs ?? 180_000;
  }

  /** How many jobs this process is running. */
  get size(): number {
    return this.#runs.size;
  }

  /**
   * Runs a job: `handle` hands its item to the channel's handlers (which reach
   * {@link handOver}); resolves once its turn ended and its replies were sent, or at once
   * when the item started no turn. Rejects when the turn was cancelled (a shutdown): the
   * job is then retried once, elsewhere or after a restart.
   */
  async run(job: QueuedJob, handle: () => Promise<void>): Promise<void> {
    const run = new JobRun(job, false);
    this.#runs.add(run);
    try {
      await this.#hand(run, job.payload.item, handle);
      if (!run.handed) run.end("done");
      const outcome = await this.#waitForTurn(run);
      await run.replying;
      if (outcome === "cancelled") {
        throw new Error(`the turn of queued message ${job.payload.key} was cancelled; it will be run again`);
      }
      // The messages this turn read as steering (answered by it) end with its job; so does
      // the ledger's confirmation of its last reply once it was sent.
      await this.#lastReplySent(run);
      run.completing = true;
      const handed = run.lastSent;
      try {
        await this.#queue.complete(job, run.consumed, handed?.id);
        handed?.done.resolve(true);
      } catch (error) {
        handed?.done.resolve(false);
        throw error;
      }
    } finally {
      // A reply sent from now on is confirmed by the ledger; one handed over and not confirmed here, too.
      run.completing = true;
      run.lastSent?.done.resolve(false);
      this.#runs.delete(run);
      if (this.#running.get(job.payload.session) === run) this.#running.delete(job.payload.session);
    }
  }

  /** Waits (a while at most) until the ledger sent the turn's last reply, when it queued it with this run's handoff. */
  async #lastReplySent(run: JobRun): Promise<void> {
    const last = run.replies - 1;
    if (last < 0 || run.queuedIndex !== last || run.sentIndexes.has(last)) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, LAST_REPLY_WAIT_MS)));
    try {
      await Promise.race([run.wake.promise, waited]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The handoff of reply `index` of `run` (see {@link DeliveryHandoff}). */
  #handoff(run: JobRun, index: number): DeliveryHandoff {
    return {
      queued: () => {
        run.queuedIndex = Math.max(run.queuedIndex, index);
      },
      sent: (id, possiblyRepeated) => {
        run.sentIndexes.add(index);
        // Only the last reply of a turn that ended, before its job completes: a turn still
        // running may send more, and the ledger must not wait for it. Either way the job need not wait.
        const take = !possiblyRepeated && !run.completing && run.ended && index === run.replies - 1 && !run.lastSent;
        const lastSent = take ? { id, done: Promise.withResolvers<boolean>() } : null;
        if (lastSent) run.lastSent = lastSent;
        if (run.ended) run.wake.resolve();
        return lastSent ? lastSent.done.promise : null;
      },
    };
  }

  /** The turn's outcome; a handed message whose turn never starts (an admission hook dropped it) lets the job go after a while. */
  async #waitForTurn(run: JobRun): Promise<"done" | "cancelled"> {
    if (run.ended) return run.outcome.promise;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const check = (): void => {
      if (run.entered || run.ended) return;
      log.warn(`queue.job message ${run.job.payload.key} of session ${run.job.payload.session} started no turn within ${this.#startWithinMs / 1000}s; let go`);
      run.end("done");
    };
    timer = setTimeout(check, this.#startWithinMs);
    try {
      return await run.outcome.promise;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Runs `handle` with `item` known as `run`'s while it is handed over (see {@link handOver}). */
  async #hand(run: JobRun, item: unknown, handle: () => Promise<void>): Promise<void> {
    if (typeof item !== "object" || item === null) return handle();
    this.#handing.set(item, run);
    try {
      await handle();
    } finally {
      if (this.#handing.get(item) === run) this.#handing.delete(item);
    }
  }

  /**
   * The channel's message handler, wrapped: a message made from `item`, the item of a job
   * running (the same object), belongs to that job. Its turn marks the job's session as
   * running here, and the job ends once the turn is over. Chatter the bot was not
   * addressed in ends its job once handed over. Other messages go straight to `handler`.
   */
  handOver(message: Envelope, handler: MessageHandler, item?: unknown): Promise<void> {
    const run = typeof item === "object" && item !== null ? this.#handing.get(item) : undefined;
    if (!run) return handler(message);
    if (run.probe) {
      run.captured = message;
      return Promise.resolve();
    }
    run.handed = true;
    const { tape, tapeEnd } = run.job.payload;
    if (run.job.retryCount > 0) message.context.retried_after_restart = true;
    // A first run's turn may trust where the queue saw its tape end (a retry's first run may have written it since).
    else if (tape !== undefined && tapeEnd !== undefined) message.tapeEnd = { tape, ...tapeEnd };
    if (!message.isActive && !message.content.trimStart().startsWith(",")) return handler(message).finally(() => run.end("done"));
    const inner = message.lifespan ?? null;
    const session = run.job.payload.session;
    const lifespan: TurnLifespan = {
      enter: () => {
        run.entered = true;
        this.#running.set(session, run);
        return inner?.enter();
      },
      exit: (error) => inner?.exit(error),
      settled: (outcome) => {
        this.#settle(run, outcome);
        inner?.settled?.(outcome);
      },
    };
    this.#byLifespan.set(lifespan, run);
    message.lifespan = lifespan;
    return handler(message);
  }

  /**
   * The turn ended. Steered messages it did not read are taken back out of the inbox (they
   * stay queued and run as the next turns); the ones it read end with its job.
   */
  #settle(run: JobRun, outcome: "done" | "cancelled"): void {
    if (this.#running.get(run.job.payload.session) === run) this.#running.delete(run.job.payload.session);
    const inbox = this.#framework?.steeringInbox ?? null;
    if (run.steered.length > 0 && inbox) {
      const unread = new Set<Envelope>();
      for (const target of uniqueTargets(run.steered)) {
        const left = inbox.drainMessages(target);
        const ours = new Set(run.steered.map((steered) => steered.message));
        for (const message of left) {
          if (ours.has(message)) unread.add(message);
          else inbox.enqueueMessage(message, target);
        }
      }
      if (outcome === "done") run.consumed = run.steered.filter((steered) => !unread.has(steered.message)).map((steered) => steered.id);
      if (unread.size > 0) log.info(`queue.steer ${unread.size} message(s) of session ${run.job.payload.session} came too late for its turn; they run next`);
    }
    run.end(outcome);
  }

  /**
   * Hands a reply of a queued turn to the delivery ledger under its key (the message's key
   * and the reply's index in the turn). A run of the same message again hands the same keys:
   * the ledger drops a reply it sent already, and sends (once) one an earlier run recorded and
   * could not send. The replies of one turn are handed over one at a time, in order; turns of
   * different sessions hand theirs concurrently. So a kill -9 can repeat, per turn then
   * running, at most the reply being sent at that moment (the ledger sends it again, as
   * possibly repeated). Other sends (no `turnMessage`, the message the sending turn answers)
   * go straight out.
   */
  sendRecorded(message: Envelope, deliver: (message: Envelope, recorded?: RecordedOrigin) => Promise<void>, turnMessage: Envelope | null = null): Promise<void> {
    const lifespan = turnMessage?.lifespan;
    const run = lifespan ? this.#byLifespan.get(lifespan) : undefined;
    if (!run) return deliver(message);
    const index = run.replies++;
    const sending = run.replying.then(() => deliver(message, { key: `${run.job.payload.key}#${index}`, handoff: this.#handoff(run, index) }));
    run.replying = sending.catch(() => undefined);
    return sending;
  }

  /**
   * A message `notice.id` arrived for `notice.session`. When that session's turn runs in
   * this process, the message is read (`parse` hands its item to the channel's handlers,
   * which reach {@link handOver}) and the `admitMessage` hook decides: `steer` puts it in
   * the running turn's steering inbox (its job ends with the turn's, or it runs next when
   * the turn ends before reading it); `drop` ends its job unrun; anything else leaves it
   * queued, to run after the turn (a follow-up). Never rejects.
   */
  async offerSteering(notice: SteerNotice, parse: (item: unknown) => Promise<void>): Promise<void> {
    const framework = this.#framework;
    const running = this.#running.get(notice.session);
    if (!framework || !running || running.job.id === notice.id) return;
    try {
      const payload = await this.#queue.waiting(notice.id);
      if (!payload || payload.session !== notice.session) return;
      const probe = new JobRun({ id: notice.id, retryCount: 0, payload }, true);
      await this.#hand(probe, payload.item, () => parse(payload.item));
      const message = probe.captured;
      if (!message || !message.isActive || message.content.trimStart().startsWith(",")) return;
      if (!this.#isRunning(running)) return;
      const target = steeringTargetOf(notice.session, message);
      const inbox = framework.steeringInbox;
      const snapshot: TurnSnapshot = { sessionId: notice.session, isRunning: true, runningCount: 1, pendingCount: 0, steeringCount: inbox ? inbox.messageCount(target) : 0 };
      const decision = await framework.admitMessage(notice.session, message, snapshot);
      // The turn may have ended while the hook decided: then the message runs as the next turn.
      if (!this.#isRunning(running)) return;
      if (decision?.action === "steer") {
        if (running.job.retryCount > 0) message.context.retried_after_restart = true;
        if (steerMessage(framework, message, target, decision.reason)) {
          running.steered.push({ id: notice.id, message, target });
          log.info(`queue.steer message ${payload.key} steered into the running turn of session ${notice.session}`);
        }
      } else if (decision?.action === "drop") {
        log.info(`queue.admission drop session_id=${notice.session}${decision.reason ? ` reason=${decision.reason}` : ""}`);
        await this.#queue.finishWaiting([notice.id]);
      }
    } catch (error) {
      log.warn(`queue.steer could not offer message ${notice.id} to the running turn of session ${notice.session}; it runs next`, error);
    }
  }

  #isRunning(run: JobRun): boolean {
    return !run.ended && this.#running.get(run.job.payload.session) === run;
  }

  /** Ends every job still waiting for its turn as cancelled (a shutdown): each is run again once. */
  cancelAll(): void {
    for (const run of this.#runs) {
      run.end("cancelled");
      run.wake.resolve();
    }
  }
}

function uniqueTargets(steered: readonly Steered[]): SteeringTarget[] {
  const seen = new Map<string, SteeringTarget>();
  for (const { target } of steered) seen.set(`${target.sessionId}\u0000${target.threadId ?? ""}`, target);
  return [...seen.values()];
}
