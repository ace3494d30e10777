/**
 * The schedule tools, `schedule.add`, `schedule.list` and `schedule.remove`, registered per
 * framework by the builtin agent. They only read and write the store: a running
 * `bub gateway` (this process or another) sees the jobs folder change and fires the jobs.
 * croner loads with the first call that needs it.
 */
import { z } from "zod";
import { BubError } from "../kernel/errors.ts";
import { withGeneratedSchema } from "../tools/builtin/generated-schema.ts";
import { registerTool, toolsOf } from "../tools/global.ts";
import { defineTool, type Tool } from "../tools/tool.ts";
import type { SettingsStore } from "../kernel/settings-contract.ts";
import type { TurnState } from "../kernel/types.ts";
import { describeWhen, isJobId, newJobId, type ScheduleJob } from "./job.ts";
import { DEFAULT_SCHEDULE_LIMITS, MAX_JOBS_SETTING, MIN_INTERVAL_SETTING, scheduleSettings, type ScheduleLimits } from "./settings.ts";
import { ScheduleStore } from "./store.ts";
import { contextValue, mayTouch, resolveTarget, seesAllSessions, type ScheduleTarget } from "./target.ts";

/** Longest delay `delay_seconds` accepts (ten years). */
const MAX_DELAY_SECONDS = 10 * 366 * 24 * 3600;

/** What the tools need: the Bub home whose `schedules/` they use, and the limits to apply. */
export interface ScheduleToolsHost {
  readonly home: string;
  /** The limits in force, read at each `schedule.add`; absent: the defaults. */
  limits?(): Promise<ScheduleLimits>;
}

/**
 * Refuses a cron expression that runs more often than the minimum interval, judged by the
 * smallest gap between its next runs.
 * @throws BubError `invalid_input` naming the gap and the setting.
 */
async function assertNotTooFrequent(cron: string, timezone: string | null, now: Date, limits: ScheduleLimits): Promise<void> {
  if (limits.minIntervalSeconds <= 0) return;
  const { smallestGapMs } = await import("./timing.ts");
  const gap = smallestGapMs(cron, timezone, now);
  if (gap === null || gap >= limits.minIntervalSeconds * 1000) return;
  throw new BubError(
    "invalid_input",
    `schedule.add: cron ${JSON.stringify(cron)} runs as often as every ${gap / 1000} s, more often than the minimum of ${limits.minIntervalSeconds} s set by ${MIN_INTERVAL_SETTING}; choose an expression whose runs are at least ${limits.minIntervalSeconds} s apart`,
  );
}

/**
 * Refuses a one-shot job sooner than the minimum interval when the turn adding it is itself
 * a scheduled run: each run adding the next would repeat a turn every few seconds for ever.
 * @throws BubError `invalid_input` naming the setting.
 */
function assertNotSelfRepeating(at: Date, now: Date, state: TurnState, limits: ScheduleLimits): void {
  if (limits.minIntervalSeconds <= 0 || contextValue(state.context, "schedule_id") === null) return;
  if (at.getTime() - now.getTime() >= limits.minIntervalSeconds * 1000) return;
  throw new BubError(
    "invalid_input",
    `schedule.add: this turn is a scheduled run, and a scheduled run may not add a job sooner than ${limits.minIntervalSeconds} s ahead (${MIN_INTERVAL_SETTING}); give a later time`,
  );
}

/**
 * Refuses a job for a session that already holds the most jobs allowed.
 * @throws BubError `invalid_input` naming the count and the setting.
 */
async function assertBelowCap(store: ScheduleStore, target: ScheduleTarget, limits: ScheduleLimits): Promise<void> {
  if (limits.maxJobsPerSession <= 0) return;
  const held = (await store.list()).filter((job) => job.session_id === target.sessionId).length;
  if (held < limits.maxJobsPerSession) return;
  throw new BubError(
    "invalid_input",
    `schedule.add: session ${target.sessionId} already has ${held} schedules, the most ${MAX_JOBS_SETTING} allows; remove one with schedule.remove (schedule.list shows them) or raise the setting`,
  );
}

function oneLine(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** One line of `schedule.list`. */
async function listLine(job: ScheduleJob, now: Date): Promise<string> {
  const { nextRunOf } = await import("./timing.ts");
  let next: string;
  try {
    next = nextRunOf(job, now)?.toISOString() ?? "now (due)";
  } catch {
    next = "never (invalid)";
  }
  return `${job.id}  ${describeWhen(job)}  next ${next}  session ${job.session_id}  prompt ${JSON.stringify(oneLine(job.prompt))}`;
}

/** The three tools over `host`'s store. */
export function scheduleTools(host: ScheduleToolsHost): Tool[] {
  const store = () => new ScheduleStore(host.home);
  /** The adds of these tools, one after another (see `schedule.add`). */
  let addQueue: Promise<unknown> = Promise.resolve();
  return [
    defineTool({
      name: "schedule.add",
      description:
        "Schedule a turn: at the given time(s) the prompt arrives in this chat as if the user sent it, and your answer goes to the chat. " +
        "Give exactly one of cron (repeating), at (one ISO time) or delay_seconds (once, from now). Returns the schedule id.",
      parameters: () =>
        z.object({
          prompt: z.string().min(1).describe("What the scheduled turn asks, e.g. 'Remind me to call Alice'."),
          cron: z.string().nullable().optional().describe("Cron expression: minute hour day month weekday, or six fields with seconds first; e.g. '0 9 * * 1-5'."),
          at: z.string().nullable().optional().describe("One run at this ISO time, e.g. 2026-05-01T09:00:00+02:00."),
          delay_seconds: z.number().positive().max(MAX_DELAY_SECONDS).nullable().optional().describe("One run this many seconds from now."),
          timezone: z.string().nullable().optional().describe("IANA time zone the cron expression is read in; default the gateway host's."),
          session: z.string().nullable().optional().describe("Session to deliver to; default this one."),
        }),
      context: true,
      async run(args, context) {
        const given = [args.cron, args.at, args.delay_seconds].filter((value) => value !== undefined && value !== null && value !== "");
        if (given.length !== 1) throw new BubError("invalid_input", "schedule.add: give exactly one of cron, at and delay_seconds");
        const target = resolveTarget(args.session, context);
        const limits = (await host.limits?.()) ?? DEFAULT_SCHEDULE_LIMITS;
        const now = new Date();
        let cron: string | null = null;
        let at: Date | null = null;
        let next: Date;
        const timezone = args.timezone?.trim() || null;
        if (args.cron) {
          cron = args.cron.trim();
          const { checkCron } = await import("./timing.ts");
          try {
            next = checkCron(cron, timezone, now);
          } catch (error) {
            throw new BubError("invalid_input", `schedule.add: ${error instanceof Error ? error.message : String(error)}`);
          }
          await assertNotTooFrequent(cron, timezone, now, limits);
        } else {
          if (timezone) throw new BubError("invalid_input", "schedule.add: timezone applies to cron only; give 'at' with its UTC offset instead");
          if (args.at) at = new Date(args.at);
          else if (typeof args.delay_seconds === "number") at = new Date(now.getTime() + args.delay_seconds * 1000);
          else throw new BubError("invalid_input", "schedule.add: give exactly one of cron, at and delay_seconds");
          if (Number.isNaN(at.getTime())) throw new BubError("invalid_input", `schedule.add: '${args.at}' is not an ISO time such as 2026-05-01T09:00:00+02:00`);
          if (at <= now) throw new BubError("invalid_input", `schedule.add: ${at.toISOString()} has passed (now ${now.toISOString()}); give a future time`);
          assertNotSelfRepeating(at, now, context.state, limits);
          next = at;
        }
        const job: ScheduleJob = {
          id: newJobId(),
          session_id: target.sessionId,
          channel: target.channel,
          chat_id: target.chatId,
          prompt: args.prompt,
          cron,
          at: at?.toISOString() ?? null,
          timezone,
          created_at: now.toISOString(),
        };
        // Counted and written one add at a time: the calls of one model step run concurrently,
        // and twenty-one at once must not all see room for one more.
        const adding = addQueue.then(async () => {
          await assertBelowCap(store(), target, limits);
          await store().add(job);
        });
        addQueue = adding.catch(() => undefined);
        await adding;
        return `scheduled ${job.id}: ${describeWhen(job)}, next ${next.toISOString()}, to session ${job.session_id}`;
      },
    }),
    defineTool({
      name: "schedule.list",
      description: "List scheduled turns: this session's, or with all=true every session's (local CLI only).",
      parameters: () => z.object({ all: z.boolean().default(false).describe("Every session's schedules, not only this one's.") }),
      context: true,
      async run({ all }, context) {
        const { state } = context;
        if (all && !seesAllSessions(context)) throw new BubError("tool", "schedule.list: outside the local CLI a turn may only list its own session's schedules");
        const own = state.session_id?.trim() ?? "";
        const jobs = (await store().list()).filter((job) => (all ? true : job.session_id === own));
        if (jobs.length === 0) return all ? "(no schedules)" : `(no schedules for session ${own || "(none)"})`;
        const now = new Date();
        return (await Promise.all(jobs.map((job) => listLine(job, now)))).join("\n");
      },
    }),
    defineTool({
      name: "schedule.remove",
      description: "Remove a scheduled turn by its id (from schedule.add or schedule.list).",
      parameters: () => z.object({ id: z.string().describe("The schedule id, e.g. sch-1a2b3c4d.") }),
      context: true,
      async run({ id }, context) {
        const wanted = id.trim();
        const job = isJobId(wanted) ? await store().get(wanted) : null;
        if (!job || !mayTouch(job.session_id, context)) throw new BubError("invalid_input", `schedule.remove: no schedule '${wanted}' in this session; schedule.list shows the ids`);
        await store().remove(wanted);
        return `removed ${wanted}`;
      },
    }),
  ].map(withGeneratedSchema);
}

/** Reads the limits from `settings` (`BUB_SCHEDULE_*`, the `schedule:` section). */
export async function scheduleLimitsOf(settings: Pick<SettingsStore, "load">): Promise<ScheduleLimits> {
  const loaded = await settings.load(scheduleSettings);
  return { minIntervalSeconds: loaded.min_interval_seconds, maxJobsPerSession: loaded.max_jobs_per_session };
}

/**
 * Registers the schedule tools with `framework` (its `home` holds the jobs, its settings the
 * limits) unless a plugin did; returns their removal.
 */
export function registerScheduleTools(framework: { readonly home: string; readonly settings: Pick<SettingsStore, "load"> }): () => void {
  // A plugin that registered a tool of the same name keeps it.
  const removals = scheduleTools({ home: framework.home, limits: () => scheduleLimitsOf(framework.settings) })
    .filter((tool) => !toolsOf(framework).has(tool.name))
    .map((tool) => registerTool(framework, tool));
  return () => {
    for (const remove of removals) remove();
  };
}
