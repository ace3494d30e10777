/**
 * When jobs run, by croner (imported by this module only, which is itself imported only when
 * a schedule tool runs or the gateway starts its schedules).
 */
import { Cron } from "croner";
import type { ScheduleJob } from "./job.ts";

export { Cron };

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

/** The first time a job runs after `after`: its cron's next match, or its instant if that is later; null when none. */
export function nextRunOf(job: ScheduleJob, after: Date): Date | null {
  if (job.at !== null) {
    const at = new Date(job.at);
    return at > after ? at : null;
  }
  return new Cron(job.cron!, { ...cronOptions(job.timezone), paused: true }).nextRun(after);
}

/**
 * A started croner job calling `onTime` with the scheduled time: every match of a cron job,
 * or the instant of a one-shot job. Stop it with `.stop()`.
 */
export function startTimer(job: ScheduleJob, onTime: (scheduledFor: Date) => void): Cron {
  if (job.at !== null) {
    const at = new Date(job.at);
    return new Cron(at, { maxRuns: 1 }, () => onTime(at));
  }
  // croner's currentRun() is when the callback started; the match it was for is remembered here.
  const cron: Cron = new Cron(job.cron!, cronOptions(job.timezone), () => {
    const scheduledFor = expected ?? new Date();
    expected = cron.nextRun();
    onTime(scheduledFor);
  });
  let expected = cron.nextRun();
  return cron;
}
