// Schedule fire latency on a loaded gateway: 1,000 jobs (700 one-shots spread over 6 s, 300
// cron jobs firing every 5 s) in a temporary BUB_HOME, run by the gateway's scheduler
// (startGatewaySchedules) into a ChannelManager that is busy the whole time with a steady
// stream of ordinary turns (200 messages/s over 50 sessions, each turn 0.5 ms of CPU and 20 ms
// of waiting) besides the scheduled turns themselves (same model). Measures, per run, how
// late each job reached the channel manager (its message handed over) and how late its
// turn's model call started, against the time it was scheduled for; target: every job
// handed over within 1 s of its time. Also reports the event loop delay during the run.
// Run: node bench/schedule/fire-latency.ts [jobs] [load-messages-per-second]
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { kernelFramework } from "../../test/support/framework.ts";
import { ChannelManager } from "../../src/channels/manager.ts";
import { ChannelMessage } from "../../src/channels/message.ts";
import { channelSettings } from "../../src/builtin/settings.ts";
import { newJobId, type ScheduleJob } from "../../src/schedule/job.ts";
import { ScheduleStore } from "../../src/schedule/store.ts";
import { startGatewaySchedules } from "../../src/schedule/gateway.ts";
import type { Envelope } from "../../src/kernel/envelope.ts";
import type { Channel } from "../../src/kernel/types.ts";

/** What the bench plugin keeps on the state. */
declare module "../../src/kernel/types.ts" {
  interface TurnState {
    scheduled_for?: string;
  }
}

const JOBS = Number(process.argv[2] ?? 1000);
const LOAD_PER_SECOND = Number(process.argv[3] ?? 200);
const LEAD_MS = 5_000;
const SPREAD_MS = 6_000;
const CRON_EVERY_SECONDS = 5;
const TURN_CPU_MS = 0.5;
const TARGET_MS = 1_000;

function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

class BenchChannel implements Channel {
  readonly name = "bench";
  readonly needsDebounce = false;
  sent = 0;
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  async send(_message: Envelope): Promise<void> {
    this.sent++;
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const home = await mkdtemp(join(tmpdir(), "bub-bench-schedule-"));
try {
  // Cron jobs every few seconds measure the scheduler, so the minimum interval (60 s by default) is lifted.
  const bub = kernelFramework({ home, env: { BUB_SCHEDULE_MIN_INTERVAL_SECONDS: "0" } });
  bub.settings.register(channelSettings);
  const turnStarts: number[] = [];
  bub.runtime.register(
    {
      name: "bench",
      loadState: ({ sessionId, message }) => {
        const scheduled = (message as ChannelMessage).context?.scheduled_for;
        return { session_id: sessionId, scheduled_for: typeof scheduled === "string" ? scheduled : undefined };
      },
      runModel: async ({ state }) => {
        const scheduled = state.scheduled_for;
        if (typeof scheduled === "string") turnStarts.push(Date.now() - Date.parse(scheduled));
        busy(TURN_CPU_MS);
        await sleep(20);
        return "ok";
      },
    },
    "bench",
  );
  const channel = new BenchChannel();
  const manager = new ChannelManager(bub, { channels: [channel], enabledChannels: ["bench"], graceSeconds: 30 });
  const stop = new AbortController();
  const running = manager.run(stop.signal);
  await manager.ready();

  // The jobs, written before the scheduler starts (as after a restart).
  const store = new ScheduleStore(home);
  const base = Date.now() + LEAD_MS;
  const cronJobs = Math.round(JOBS * 0.3);
  const written = performance.now();
  for (let index = 0; index < JOBS; index++) {
    const chat = String(index % 100);
    const isCron = index < cronJobs;
    const job: ScheduleJob = {
      id: newJobId(),
      session_id: `bench:${chat}`,
      channel: "bench",
      chat_id: chat,
      prompt: `job ${index}`,
      cron: isCron ? `*/${CRON_EVERY_SECONDS} * * * * *` : null,
      at: isCron ? null : new Date(base + Math.floor(((index - cronJobs) / (JOBS - cronJobs)) * SPREAD_MS)).toISOString(),
      timezone: null,
      // Cron jobs start counting at `base`, so none has a match missed while the jobs are written.
      created_at: new Date(isCron ? base : Date.now()).toISOString(),
    };
    await store.add(job);
  }
  const writeMs = performance.now() - written;

  // The load: ordinary messages all through the run.
  let loadSent = 0;
  const load = setInterval(() => {
    for (let count = 0; count < LOAD_PER_SECOND / 100; count++) {
      const chat = String(loadSent++ % 50);
      void manager.handleMessage(new ChannelMessage({ sessionId: `load:${chat}`, channel: "bench", chatId: chat, content: "hello", isActive: true }));
    }
  }, 10);

  const handedLate: number[] = [];
  let missedRuns = 0;
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const started = performance.now();
  const scheduler = await startGatewaySchedules(bub, {
    enabledChannels: () => manager.enabledChannels(),
    handleMessage: (message) => {
      const { scheduled_for: scheduledFor, missed_run: missed } = (message as ChannelMessage).context;
      if (missed) missedRuns++;
      else handedLate.push(Date.now() - Date.parse(String(scheduledFor)));
      return manager.handleMessage(message);
    },
  });
  const startMs = performance.now() - started;
  await sleep(LEAD_MS + SPREAD_MS + 1_000);
  await scheduler.stop();
  clearInterval(load);
  delay.disable();
  await manager.idle();
  stop.abort();
  await running;

  const late = [...handedLate].sort((a, b) => a - b);
  const turns = [...turnStarts].sort((a, b) => a - b);
  const expectedCron = cronJobs * Math.floor(SPREAD_MS / 1000 / CRON_EVERY_SECONDS);
  console.log(`jobs: ${JOBS} (${JOBS - cronJobs} one-shot over ${SPREAD_MS / 1000} s, ${cronJobs} cron every ${CRON_EVERY_SECONDS} s); load ${LOAD_PER_SECOND} msg/s; Node ${process.version}`);
  console.log(`writing the jobs: ${writeMs.toFixed(0)} ms; scheduler start (load ${JOBS} jobs, arm timers): ${startMs.toFixed(0)} ms`);
  console.log(`runs handed over: ${late.length} on time, ${missedRuns} missed ones run at start (at least ${JOBS - cronJobs + expectedCron} expected); ordinary turns sent: ${loadSent}; outbounds: ${channel.sent}`);
  console.log(`handed to the manager, ms late: p50 ${percentile(late, 50)}  p99 ${percentile(late, 99)}  max ${late.at(-1)}`);
  console.log(`model call started, ms late:    p50 ${percentile(turns, 50)}  p99 ${percentile(turns, 99)}  max ${turns.at(-1)}`);
  console.log(`event loop delay, ms: p50 ${(delay.percentile(50) / 1e6).toFixed(1)}  p99 ${(delay.percentile(99) / 1e6).toFixed(1)}  max ${(delay.max / 1e6).toFixed(1)}`);
  const ok = late.length >= JOBS - cronJobs + expectedCron && (late.at(-1) ?? Infinity) <= TARGET_MS;
  console.log(ok ? `PASS: every run handed over within ${TARGET_MS} ms of its time` : `FAIL: target is every run within ${TARGET_MS} ms`);
  process.exitCode = ok ? 0 : 1;
} finally {
  await rm(home, { recursive: true, force: true });
}
