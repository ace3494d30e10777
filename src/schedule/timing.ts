/**
 * When jobs run, by croner's parser (imported by this module only, which is itself imported
 * only when a schedule tool runs or the gateway starts its schedules).
 */
import { Cron } from "croner";
import type { ScheduleJob } from "./job.ts";

/** Options every job's {@link Cron} gets. */
function cronOptions(timezone: string | null): { timezone?: string } {
  return timezone ? { timezone } : {};
}

/**
 * Checks a cron expression and time zone and returns the next time it matches after `after`.
 * @throws Error saying what is wrong with the expression or the zone, or that it never matches.
 */
export function checkCron(expression: string, timezone: string | null, after: Date = new Date()): Date {
  let cron: Cron;
  try {
    cron = new Cron(expression, { ...cronOptions(timezone), paused: true });
  } catch (error) {
    throw new Error(`'${expression}' is not a cron expression (${error instanceof Error ? error.message : String(error)})`, { cause: error });
  }
  let next: Date | null;
  try {
    next = cron.nextRun(after);
  } catch (error) {
    throw new Error(`'${timezone}' is not a time zone; use an IANA name such as Europe/Berlin`, { cause: error });
  }
  if (next === null) throw new Error(`'${expression}' never matches a future time`);
  return next;
}

/** How many upcoming runs {@link smallestGapMs} compares. */
const GAP_SAMPLES = 64;

/** The smallest gap between consecutive times of `runs`, in ms; null for fewer than two. */
function smallestGap(runs: readonly Date[]): number | null {
  let smallest: number | null = null;
  for (let index = 1; index < runs.length; index++) {
    const gap = runs[index].getTime() - runs[index - 1].getTime();
    if (smallest === null || gap < smallest) smallest = gap;
  }
  return smallest;
}

/**
 * The smallest gap, in ms, between the next {@link GAP_SAMPLES} runs of a cron expression
 * after `after` (not what the string looks like: `0,1 9 * * *` runs twice a minute apart
 * once a day). Null when it runs fewer than twice more. Call {@link checkCron} first.
 */
export function smallestGapMs(expression: string, timezone: string | null, after: Date = new Date()): number | null {
  return smallestGap(new Cron(expression, { ...cronOptions(timezone), paused: true }).nextRuns(GAP_SAMPLES, after));
}

/**
 * Next run times of jobs, with one parsed croner pattern per distinct expression and zone
 * (parsing costs far more than finding the next match, and many jobs share an expression).
 */
export class RunTimes {
  readonly #patterns = new Map<string, Cron>();
  readonly #gaps = new Map<string, number | null>();

  /** The first time `job` runs after `after`: its cron's next match, or its instant if later; null when none. */
  next(job: ScheduleJob, after: Date): Date | null {
    if (job.at !== null) {
      const at = new Date(job.at);
      return at > after ? at : null;
    }
    if (job.cron === null) return null;
    const key = `${job.timezone ?? ""}\u0000${job.cron}`;
    let cron = this.#patterns.get(key);
    if (!cron) this.#patterns.set(key, (cron = new Cron(job.cron, { ...cronOptions(job.timezone), paused: true })));
    return cron.nextRun(after);
  }

  /** The first time `job` runs at least `minMs` after `lastRun` and after `now` (its next run when `minMs` is 0). */
  nextSpaced(job: ScheduleJob, lastRun: number | null, minMs: number, now: number): Date | null {
    // croner looks from the next whole second after `after`, so one millisecond before
    // `lastRun + minMs` (in whole seconds, as cron counts) yields a match at that time or later.
    const spaced = lastRun === null || minMs <= 0 ? now : Math.max(now, Math.floor(lastRun / 1000) * 1000 + minMs - 1);
    return this.next(job, new Date(spaced));
  }

  /** The smallest gap between a cron job's next runs (see {@link smallestGapMs}); null for a one-shot job. */
  smallestGapMs(job: ScheduleJob, after: Date): number | null {
    if (job.cron === null) return null;
    // Computed once per expression and zone: a thousand jobs on one expression cost one sampling.
    const key = `${job.timezone ?? ""}\u0000${job.cron}`;
    if (this.#gaps.has(key)) return this.#gaps.get(key) ?? null;
    const runs: Date[] = [];
    let from = after;
    for (let index = 0; index < GAP_SAMPLES; index++) {
      const next = this.next(job, from);
      if (next === null) break;
      runs.push(next);
      from = next;
    }
    const gap = smallestGap(runs);
    this.#gaps.set(key, gap);
    return gap;
  }
}

/** The first time a job runs after `after` (see {@link RunTimes.next}). */
export function nextRunOf(job: ScheduleJob, after: Date): Date | null {
  return new RunTimes().next(job, after);
}
