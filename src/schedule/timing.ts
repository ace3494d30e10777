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

/**
 * Next run times of jobs, with one parsed croner pattern per distinct expression and zone
 * (parsing costs far more than finding the next match, and many jobs share an expression).
 */
export class RunTimes {
  readonly #patterns = new Map<string, Cron>();

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
}

/** The first time a job runs after `after` (see {@link RunTimes.next}). */
export function nextRunOf(job: ScheduleJob, after: Date): Date | null {
  return new RunTimes().next(job, after);
}
