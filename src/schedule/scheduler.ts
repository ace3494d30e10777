/**
 * The gateway's scheduler: loads the stored jobs, runs (or skips) what was missed while no
 * gateway ran, keeps every job's next run (from croner) in one queue behind one timer, and
 * follows the jobs folder as schedule tools in this or another `bub` process add and remove
 * jobs. One timer rather than a croner job per schedule: a thousand jobs cost a thousand
 * queue entries, and a croner pattern is parsed once per distinct expression.
 */
import { watch, type FSWatcher } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { createLogger } from "../kernel/log.ts";
import { describeWhen, type ScheduleJob } from "./job.ts";
import type { ScheduleStore } from "./store.ts";
import { DueQueue } from "./due-queue.ts";
import { RunTimes } from "./timing.ts";
import { DEFAULT_MIN_INTERVAL_SECONDS, MIN_INTERVAL_SETTING } from "./settings.ts";

const log = createLogger("bub:schedule");

/** Most runs fired in one go before the event loop gets a turn. */
const FIRE_BATCH = 100;

/** What to do with runs missed while the gateway was down (`BUB_SCHEDULE_MISSED`). */
export type MissedPolicy = "run_once" | "skip";

/** One run handed to {@link SchedulerOptions.deliver}. */
export interface ScheduledRun {
  /** The time the run was scheduled for. */
  readonly scheduledFor: Date;
  /** True for a run the gateway missed while it was down, run late at start. */
  readonly missed: boolean;
}

/** Options of {@link Scheduler}. */
export interface SchedulerOptions {
  readonly store: ScheduleStore;
  /** Hands a due job to whoever runs it (the gateway: the channel manager). */
  deliver(job: ScheduleJob, run: ScheduledRun): Promise<void>;
  /** Missed runs at start: run each job once (`run_once`, default) or not at all (`skip`). */
  readonly missed?: MissedPolicy;
  /** How often the jobs folder is read again besides watching it (ms; default 10 000). */
  readonly rescanMs?: number;
  /**
   * Shortest time between two runs of one cron job, in seconds (`schedule.min_interval_seconds`;
   * default 60, 0: none). A stored job whose expression matches more often (written before the
   * limit, or by hand) is not refused: its runs are spaced this far apart, with one log line.
   */
  readonly minIntervalSeconds?: number;
}

/** Runs stored jobs on time (see the module comment). */
export class Scheduler {
  readonly #options: SchedulerOptions;
  /** Armed jobs with the time of their next run. */
  readonly #armed = new Map<string, { job: ScheduleJob; due: number }>();
  readonly #queue = new DueQueue();
  readonly #times = new RunTimes();
  #timer: NodeJS.Timeout | null = null;
  #watcher: FSWatcher | null = null;
  #interval: NodeJS.Timeout | null = null;
  #rescanning: Promise<void> = Promise.resolve();
  #rescanQueued = false;
  #stopped = false;
  #inFlight = new Set<Promise<void>>();
  /** One-shot jobs being run: a rescan before their file is deleted must not run them again. */
  readonly #firing = new Set<string>();

  constructor(options: SchedulerOptions) {
    this.#options = options;
  }

  /** Jobs waiting for their next run. */
  get size(): number {
    return this.#armed.size;
  }

  /** Loads the jobs, handles missed runs, starts the timers and follows the folder. */
  async start(): Promise<void> {
    const { store } = this.#options;
    await store.prepare();
    const jobs = await store.list();
    await this.#pruneStates(new Set(await store.ids()));
    await Promise.all(jobs.map((job) => this.#adopt(job, true)));
    if (this.#stopped) return;
    try {
      this.#watcher = watch(store.jobsDir, () => this.rescan());
      this.#watcher.on("error", (error) => log.warn(`schedule.watch stopped (${error.message}); the jobs folder is read every ${this.#rescanMs / 1000} s`));
    } catch (error) {
      log.warn(`schedule.watch unavailable (${error instanceof Error ? error.message : String(error)}); the jobs folder is read every ${this.#rescanMs / 1000} s`);
    }
    this.#interval = setInterval(() => this.rescan(), this.#rescanMs);
    this.#interval.unref();
    log.info(`schedule.started jobs=${this.#armed.size} missed=${this.#policy}`);
  }

  get #rescanMs(): number {
    return this.#options.rescanMs ?? 10_000;
  }

  get #minMs(): number {
    return (this.#options.minIntervalSeconds ?? DEFAULT_MIN_INTERVAL_SECONDS) * 1000;
  }

  get #policy(): MissedPolicy {
    return this.#options.missed ?? "run_once";
  }

  /** Reads the jobs folder again: starts new jobs, stops removed ones. Resolves when done. */
  rescan(): Promise<void> {
    if (this.#rescanQueued) return this.#rescanning;
    this.#rescanQueued = true;
    this.#rescanning = this.#rescanning.then(async () => {
      this.#rescanQueued = false;
      if (this.#stopped) return;
      try {
        const ids = new Set(await this.#options.store.ids());
        for (const id of [...this.#armed.keys()]) if (!ids.has(id)) this.#disarm(id, "removed");
        const added = [...ids].filter((id) => !this.#armed.has(id));
        const jobs = await Promise.all(added.map((id) => this.#options.store.get(id)));
        await Promise.all(jobs.map((job) => (job ? this.#adopt(job, false) : undefined)));
      } catch (error) {
        log.error("schedule.rescan failed", error);
      }
    });
    return this.#rescanning;
  }

  /** Stops every timer and stops following the folder; resolves once runs being handed over are. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#watcher?.close();
    this.#watcher = null;
    if (this.#interval) clearInterval(this.#interval);
    this.#interval = null;
    this.#armed.clear();
    this.#queue.clear();
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#rescanning;
    await Promise.all(this.#inFlight);
  }

  /** Starts a job's timer, first running or skipping what it missed when `atStart`. */
  async #adopt(job: ScheduleJob, atStart: boolean): Promise<void> {
    if (this.#stopped || this.#armed.has(job.id) || this.#firing.has(job.id)) return;
    const now = new Date();
    /** When the job last ran (cron jobs): its next run is spaced from it. */
    let lastRun: number | null = null;
    if (job.at !== null) {
      const at = new Date(job.at);
      if (at <= now) {
        if (atStart && this.#policy === "skip") {
          log.info(`schedule.missed id=${job.id} ${describeWhen(job)} skipped (BUB_SCHEDULE_MISSED=skip)`);
          await this.#options.store.remove(job.id);
          return;
        }
        void this.#fire(job, at, atStart);
        return;
      }
    } else {
      this.#warnIfTooFrequent(job, now);
      if (atStart) {
        const state = await this.#options.store.runState(job.id);
        // Spaced from when the last run was handed over (a missed run's scheduled time may be long past).
        if (state) lastRun = Math.max(Date.parse(state.last_run_at), Date.parse(state.fired_at));
        const due = state ? this.#times.nextSpaced(job, lastRun, this.#minMs, lastRun ?? 0) : this.#times.next(job, new Date(job.created_at));
        if (due !== null && due <= now) {
          if (this.#policy === "run_once") {
            void this.#fire(job, due, true);
            lastRun = now.getTime();
          } else log.info(`schedule.missed id=${job.id} ${describeWhen(job)} skipped (BUB_SCHEDULE_MISSED=skip)`);
        }
      }
    }
    if (this.#stopped || this.#armed.has(job.id)) return;
    this.#arm(job, job.at !== null ? new Date(job.at) : this.#times.nextSpaced(job, lastRun, this.#minMs, now.getTime()));
  }

  /** Logs once per adoption when a cron job matches more often than the minimum interval allows. */
  #warnIfTooFrequent(job: ScheduleJob, now: Date): void {
    const minMs = this.#minMs;
    if (minMs <= 0) return;
    const gap = this.#times.smallestGapMs(job, now);
    if (gap === null || gap >= minMs) return;
    log.warn(
      `schedule.too_frequent id=${job.id} ${describeWhen(job)} runs as often as every ${gap / 1000} s; its runs are kept ${minMs / 1000} s apart, the minimum of ${MIN_INTERVAL_SETTING} — remove the job or change its expression`,
    );
  }

  /** Queues the job's next run (none: it is not armed), and sets the timer unless told not to. */
  #arm(job: ScheduleJob, next: Date | null, wake = true): void {
    if (next === null) {
      log.info(`schedule.done id=${job.id} ${describeWhen(job)} has no further run`);
      return;
    }
    this.#armed.set(job.id, { job, due: next.getTime() });
    this.#queue.push({ due: next.getTime(), id: job.id });
    if (wake) this.#wake();
  }

  #disarm(id: string, why: string | null): void {
    // Its queue entry is skipped when it comes up.
    if (this.#armed.delete(id) && why) log.info(`schedule.stopped id=${id} (${why})`);
  }

  /** Sets the one timer for the earliest queued run (at most a minute ahead, so a changed clock is noticed). */
  #wake(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const next = this.#queue.peek();
    if (next === undefined || this.#stopped) return;
    this.#timer = setTimeout(() => this.#tick(), Math.min(Math.max(0, next.due - Date.now()), 60_000));
  }

  /**
   * Fires the runs that are due, queues the next runs of cron jobs, and sets the timer again.
   * At most {@link FIRE_BATCH} runs per call: the turns a burst starts (many jobs on the same
   * minute) get to run between batches instead of holding up the event loop all at once.
   */
  #tick(): void {
    this.#timer = null;
    const now = Date.now();
    let fired = 0;
    for (let entry = this.#queue.peek(); entry !== undefined && entry.due <= now; entry = this.#queue.peek()) {
      if (fired === FIRE_BATCH) {
        this.#timer = setTimeout(() => this.#tick(), 0);
        return;
      }
      this.#queue.pop();
      const armed = this.#armed.get(entry.id);
      if (!armed || armed.due !== entry.due) continue; // removed, or re-armed since
      this.#armed.delete(entry.id);
      const { job } = armed;
      fired++;
      void this.#fire(job, new Date(entry.due), false);
      // A cron job that fell behind goes on from now, never running the matches in between,
      // and never sooner than the minimum interval after this run.
      if (job.cron !== null) this.#arm(job, this.#times.nextSpaced(job, entry.due, this.#minMs, now), false);
    }
    this.#wake();
  }

  /** Records the run, hands it over, and forgets a one-shot job. Never throws. */
  #fire(job: ScheduleJob, scheduledFor: Date, missed: boolean): Promise<void> {
    if (job.at !== null) this.#firing.add(job.id);
    const running = (async () => {
      const { store, deliver } = this.#options;
      try {
        // Handed over first, then recorded (a cron job's state) or deleted (a one-shot job):
        // on time under load, and a run the process died before recording is run again at
        // start (at least once, never lost).
        const firedAt = new Date();
        log.info(`schedule.fire id=${job.id} session_id=${job.session_id} scheduled_for=${scheduledFor.toISOString()}${missed ? " missed=true" : ""}`);
        await deliver(job, { scheduledFor, missed });
        if (job.cron !== null) await store.recordRun(job.id, scheduledFor, firedAt);
      } catch (error) {
        log.error(`schedule.fire id=${job.id} failed`, error);
      }
      if (job.at !== null) {
        await store.remove(job.id).catch((error: unknown) => log.error(`schedule.remove id=${job.id} failed`, error));
        this.#firing.delete(job.id);
      }
    })();
    this.#inFlight.add(running);
    void running.finally(() => this.#inFlight.delete(running));
    return running;
  }

  /** Deletes run states whose job is gone (a removal that raced a run). */
  async #pruneStates(ids: ReadonlySet<string>): Promise<void> {
    const names = await readdir(this.#options.store.stateDir).catch((): string[] => []);
    await Promise.all(
      names.filter((name) => name.endsWith(".json") && !ids.has(name.slice(0, -".json".length))).map((name) => rm(join(this.#options.store.stateDir, name), { force: true })),
    );
  }
}
