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
import { describeWhen, isJobId, newJobId, type ScheduleJob } from "./job.ts";
import { ScheduleStore } from "./store.ts";
import { mayTouch, resolveTarget, seesAllSessions } from "./target.ts";

/** Longest delay `delay_seconds` accepts (ten years). */
const MAX_DELAY_SECONDS = 10 * 366 * 24 * 3600;

/** What the tools need: the Bub home whose `schedules/` they use. */
export interface ScheduleToolsHost {
  readonly home: string;
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
        } else {
          if (timezone) throw new BubError("invalid_input", "schedule.add: timezone applies to cron only; give 'at' with its UTC offset instead");
          if (args.at) at = new Date(args.at);
          else if (typeof args.delay_seconds === "number") at = new Date(now.getTime() + args.delay_seconds * 1000);
          else throw new BubError("invalid_input", "schedule.add: give exactly one of cron, at and delay_seconds");
          if (Number.isNaN(at.getTime())) throw new BubError("invalid_input", `schedule.add: '${args.at}' is not an ISO time such as 2026-05-01T09:00:00+02:00`);
          if (at <= now) throw new BubError("invalid_input", `schedule.add: ${at.toISOString()} has passed (now ${now.toISOString()}); give a future time`);
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
        await store().add(job);
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
        const own = typeof state.session_id === "string" ? state.session_id.trim() : "";
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

/** Registers the schedule tools with `framework` (its `home` holds the jobs) unless a plugin did; returns their removal. */
export function registerScheduleTools(framework: ScheduleToolsHost & object): () => void {
  // A plugin that registered a tool of the same name keeps it.
  const removals = scheduleTools({ home: framework.home })
    .filter((tool) => !toolsOf(framework).has(tool.name))
    .map((tool) => registerTool(framework, tool));
  return () => {
    for (const remove of removals) remove();
  };
}
