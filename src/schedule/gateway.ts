/**
 * Schedules in `bub gateway`: each due job becomes an inbound message of its session,
 * handed to the channel manager like one its channel received, so the turn runs in that
 * session and the answer is dispatched to the job's channel and chat.
 */
import { createLogger } from "../kernel/log.ts";
import type { BubFramework } from "../kernel/framework.ts";
import type { ChannelManager } from "../channels/manager.ts";
import { ChannelMessage } from "../channels/message.ts";
import type { ScheduleJob } from "./job.ts";
import { Scheduler, type ScheduledRun } from "./scheduler.ts";
import { scheduleSettings } from "./settings.ts";
import { ScheduleStore } from "./store.ts";

const log = createLogger("bub:schedule");

/**
 * The message a job's run arrives as: the job's session, channel and chat, its prompt as the
 * content, and `schedule_id` / `scheduled_for` (and `missed_run` for a late run at start) in
 * the context line the model sees. Active, so a debouncing channel never drops it.
 */
export function scheduledMessage(job: ScheduleJob, run: ScheduledRun): ChannelMessage {
  const context: Record<string, unknown> = { channel: `$${job.channel}`, chat_id: job.chat_id, schedule_id: job.id, scheduled_for: run.scheduledFor.toISOString() };
  if (run.missed) context.missed_run = true;
  return new ChannelMessage({ sessionId: job.session_id, channel: job.channel, chatId: job.chat_id, content: job.prompt, isActive: true, outputChannel: job.channel, context });
}

/** The manager as the gateway's schedules use it. */
export type ScheduleManager = Pick<ChannelManager, "enabledChannels" | "handleMessage">;

/**
 * Starts the schedules of `framework.home` for a gateway whose manager is `manager`
 * (started or about to be: messages handed over before it runs wait for it). A job whose
 * channel this gateway does not serve is logged and not run.
 */
export async function startGatewaySchedules(framework: BubFramework, manager: ScheduleManager): Promise<Scheduler> {
  const { missed, min_interval_seconds } = await framework.settings.load(scheduleSettings);
  const scheduler = new Scheduler({
    store: new ScheduleStore(framework.home),
    missed,
    minIntervalSeconds: min_interval_seconds,
    async deliver(job, run) {
      if (!manager.enabledChannels().some((channel) => channel.name === job.channel)) {
        log.warn(`schedule.undelivered id=${job.id} channel '${job.channel}' is not served by this gateway — enable it (bub gateway --enable-channel ${job.channel}) or remove the schedule`);
        return;
      }
      await manager.handleMessage(scheduledMessage(job, run));
    },
  });
  await scheduler.start();
  return scheduler;
}
